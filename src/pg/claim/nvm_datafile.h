/*-------------------------------------------------------------------------
 *
 * nvm_datafile.h
 *	  Small files of nvmam in the data directory (pg_nvm/), read whole and
 *	  replaced durably (nvm_datafile.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_DATAFILE_H
#define NVM_DATAFILE_H

/*
 * nvm_datafile_write replaces pg_nvm/NAME with the len bytes of buf,
 * durably: pg_nvm is created if missing, a temporary file is written and
 * fsynced, then renamed over NAME and the directory fsynced (durable_rename).
 * A failure is reported at elevel, with what names the file in the message
 * ("nvm binding file"), and returns false.
 */
extern bool nvm_datafile_write(const char *name, const char *what,
							   const char *buf, int len, int elevel);

/*
 * nvm_datafile_read reads pg_nvm/NAME into buf (at most size - 1 bytes,
 * NUL-terminated) and returns its length, or -1 with errno ENOENT when the
 * file does not exist; any other failure is reported at elevel with what
 * names the file (-1 if elevel < ERROR).
 */
extern int	nvm_datafile_read(const char *name, const char *what,
							  char *buf, int size, int elevel);

#endif							/* NVM_DATAFILE_H */
