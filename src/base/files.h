/*
 * files.h - the files of a run: the inputs it reads and the outputs it
 * writes, kept apart.
 *
 * Inputs: files_read_input() reads a configuration or CSV file, refusing
 * what is not a regular file (a device such as /dev/zero, a FIFO) or is
 * larger than the caller allows, and notes it by device and inode, so that an
 * output can be compared with every input of the run whatever its spelling
 * (`./x.yaml`, a symbolic or hard link). The config loader and the CSV
 * reader read through it.
 *
 * Outputs: files_check_output() says whether a path may be written (not an
 * input of the run, not a directory); files_open_output() refuses an input
 * as a last defence; files_close_output() reports a lost write (a write
 * error, the flush, the close), so that a full disk or a closed pipe is an
 * error and not a truncated file with exit status 0. files_make_dir()
 * creates the last component of a directory path only, never the
 * directories above the one asked for.
 *
 * The list of inputs lives as long as the process (a command reads a handful
 * of files; `simtrain serve` only the shipped library's, each noted once), behind a lock:
 * these functions may be called from several threads at once.
 */
#ifndef SIMTRAIN_FILES_H
#define SIMTRAIN_FILES_H

#include <stddef.h>
#include <stdio.h>

/*
 * Read a regular file of at most max_bytes into a NUL-terminated heap buffer
 * (*len bytes, may be NULL) and note it as an input. NULL with *why (static
 * text: "not a regular file", "larger than 16 MiB", strerror) on failure.
 */
char *files_read_input(const char *path, size_t max_bytes, size_t *len, const char **why);

/* Note `path` as an input of the run (files_read_input() does). */
void files_note_input(const char *path);

/* The path an input was read from when `path` (resp. open file `fd`) is that input, else NULL. */
const char *files_input_at(const char *path);
const char *files_input_fd(int fd);

/*
 * Whether `path` may be written: 0, or -1 with a message (lowercase, no
 * "error:" prefix) in msg: it is an input of the run, or a directory. "-" is
 * standard output, refused when it is redirected onto an input.
 */
int files_check_output(const char *path, char *msg, size_t msglen);

/*
 * Open `path` for writing ("-": standard output). NULL with errno set when it
 * cannot be opened, errno EEXIST when it is an input of the run.
 */
FILE *files_open_output(const char *path);

/*
 * Finish an output of files_open_output(): 0 when every byte reached the
 * file, -1 (errno set) when a write failed. Closes f unless it is standard
 * output, which is flushed.
 */
int files_close_output(FILE *f);

/*
 * Whether files_make_dir(dir) can succeed: `dir` is a directory, or does not
 * exist and its parent is a directory. 0, or -1 with a message in msg.
 */
int files_check_dir(const char *dir, char *msg, size_t msglen);

/*
 * Make directory `dir` unless it exists; its parent must exist (no parents
 * are created). 0, or -1 with a message (lowercase, no prefix) in msg.
 */
int files_make_dir(const char *dir, char *msg, size_t msglen);

#endif
