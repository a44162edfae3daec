/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Module and configuration files that are checked, hashed and loaded through
 * one descriptor. Opening a path three times (to stat, to hash, to dlopen)
 * lets the file change between the looks; a descriptor keeps naming the
 * inode that was checked, so what is hashed is what runs.
 */
#ifndef MPCE_ENGINE_RUNTIME_MODULE_FILE_H
#define MPCE_ENGINE_RUNTIME_MODULE_FILE_H

#include <stddef.h>

struct mpce_module_file {
    int fd;              /* the checked file, -1 once closed */
    char path[4096];     /* dir/name, for messages */
    char sha256[65];     /* of the bytes read from fd */
    unsigned long long size; /* st_size and st_mtime of fd: the selector's */
    long long mtime;         /* cheap test of whether a tuned module changed */
    unsigned long long dev, ino; /* which file: a rename over the path makes another */
    /* The last open or load failed for want of memory: that says nothing
     * about the module, so a caller should fail rather than go on without it. */
    int no_memory;
};

/* Open dir/name once, check the file and every ancestor directory, hash it
 * from the descriptor. 0, or -1 with a one-line reason in why (f->fd is -1;
 * f->no_memory set if memory ran out). */
int mpce_module_file_open(const char *dir, const char *name, struct mpce_module_file *f,
                          char *why, size_t why_len);

/* dlopen the checked descriptor itself. On success the descriptor stays
 * open: close it (mpce_module_file_close) only after dlclose, so its number
 * (the module's name to the dynamic linker) is not reused meanwhile. NULL
 * with the reason, the descriptor closed, on failure (f->no_memory set when
 * dlerror says memory ran out). */
void *mpce_module_file_load(struct mpce_module_file *f, char *why, size_t why_len);

/* The name /proc/self/fd/<fd> in name, and whether it reaches the file open
 * on fd, checked by stat against fstat (not access(), which asks for the
 * real uid a setuid program does not run as): 0; -1 with errno when either
 * cannot be looked at (ENOENT: no /proc); -2 when it names another file (a
 * fake /proc). */
int mpce_fd_proc_name(int fd, char name[64]);

/* Safe to call twice and after mpce_module_file_load, so error paths need
 * not track what is still open. */
void mpce_module_file_close(struct mpce_module_file *f);

/* The configuration-file trust check of root and setuid processes: the
 * descriptor of the checked regular file (read it, not the path), or -1
 * with the reason (and errno ENOMEM when memory ran out checking it, no
 * verdict on the file). */
int mpce_file_open_trusted(const char *path, char *why, size_t why_len);

/* Tests only: called between hashing and dlopen with the module's path, so a
 * test can replace the file on disk in that window and show that the bytes
 * that were checked are the ones that get loaded. NULL outside tests. */
extern void (*mpce_module_file_test_hook)(const char *path);

#endif
