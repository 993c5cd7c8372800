/*
 * allocbench.c: nanoseconds per allocation and free (blocks of 56-112 bytes,
 * freed in batches of 64), one thread or more, persisting off.  Each thread
 * claims a clock slot first, as a writing backend does (so it allocates
 * through its cache where the allocator has them).  Build against a build's
 * core library:
 *   gcc -O2 -Isrc/core bench/tools/allocbench.c BUILD/libnvmcore.a -lpmem -lpthread -o ab
 *   ./ab THREADS [ALLOCATIONS_PER_THREAD, default 2000000]
 */
#include "alloc.h"
#include "core.h"
#include "persist.h"
#include "pool.h"
#include "txn.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
static long N = 2000000;
static void *work(void *a){(void)a; int slot=nvm_slot_acquire(100); nvm_off keep[64]; for(long i=0;i<N;i++){nvm_off o=nvm_alloc(56+(i&7)*8); if(!o) abort(); keep[i&63]=o; if((i&63)==63) for(int k=0;k<64;k++) nvm_free(keep[k]);} if(slot>=0) nvm_slot_release(slot); return NULL;}
int main(int argc,char**argv){
  int threads=atoi(argv[1]); if(argc>2) N=atol(argv[2]); char path[64]; snprintf(path,64,"/dev/shm/nvmam_allocb_%d",getpid());
  NvmPoolOptions o={0}; char err[256]; o.path=path;o.create_size=256<<20;o.system_identifier=1;o.cc_mode=NVM_CC_MCSI;o.max_slots=8;
  if(nvm_pool_open(&o,err,256)!=NVM_POOL_CREATED){fprintf(stderr,"%s\n",err);return 1;}
  void*sh=calloc(1,nvm_core_shmem_size()); nvm_core_startup(sh); nvm_persist_set_mode(NVM_PERSIST_NONE,NULL);
  pthread_t th[8]; double t0=now(); for(int i=0;i<threads;i++) pthread_create(&th[i],0,work,0); for(int i=0;i<threads;i++) pthread_join(th[i],0);
  double t=now()-t0; printf("%.1f\n", t*1e9/(N*threads)); nvm_pool_close(); unlink(path); return 0;}
