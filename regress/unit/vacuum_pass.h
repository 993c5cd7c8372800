/*
 * vacuum_pass.h
 *	  What VACUUM does to a table without indexes, for the unit tests: prune
 *	  every chain, retire dead records, finish retired ones, give back
 *	  index roots whose run is gone.
 */
#ifndef VACUUM_PASS_H
#define VACUUM_PASS_H

#include "store.h"

extern void vacuum_pass(NvmTable *t);

#endif							/* VACUUM_PASS_H */
