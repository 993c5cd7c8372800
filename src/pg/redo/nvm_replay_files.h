/*-------------------------------------------------------------------------
 *
 * nvm_replay_files.h
 *	  The checkpoint files of a rebuilt pool at the start of its replay
 *	  (nvm_replay_files.c), called by the replay of the nvm redo records
 *	  (nvm_replay.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef NVM_REPLAY_FILES_H
#define NVM_REPLAY_FILES_H

#include "access/xlogreader.h"
#include "tabledir.h"
#include "txn.h"

/*
 * What a load of the files needs of replay: the transaction of the startup
 * process's clock slot (begun if it is not, its slot in *slot), the replay
 * of a COMMIT and of a LOCKS record's data (of the in-doubt file, read at
 * no WAL position), and the slot given back.
 */
typedef struct NvmReplayFilesReplay
{
	NvmTxn	   *(*begin) (int *slot);
	void		(*commit_data) (const char *p, size_t len, XLogRecPtr read, XLogRecPtr end_rec);
	void		(*locks_data) (const char *p, XLogRecPtr read);
	void		(*exit) (int code, Datum arg);
} NvmReplayFilesReplay;

extern bool nvm_replay_files_prepare(const NvmReplayFilesReplay *r);
extern bool nvm_replay_files_load_now(const NvmReplayFilesReplay *r);
extern void nvm_replay_files_check_end(void);
extern bool nvm_replay_before_file_at(const NvmTableKey *key, XLogRecPtr read);
extern bool nvm_replay_before_file(const NvmTableKey *key, XLogReaderState *record);

#endif							/* NVM_REPLAY_FILES_H */
