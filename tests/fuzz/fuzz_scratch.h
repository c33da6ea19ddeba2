/*
 * fuzz_scratch.h - the set-up the importer fuzzers share (fuzz_json.c, fuzz_args.c): data
 * from tests/fixtures unless SIMTRAIN_DATA says otherwise, diagnostics to /dev/null, and one
 * scratch file, removed at exit, that each input is written to as the importers read files.
 * Each fuzzer is its own program, so the state below is per program.
 */
#ifndef SIMTRAIN_FUZZ_SCRATCH_H
#define SIMTRAIN_FUZZ_SCRATCH_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static FILE *devnull;
static char *scratch_path;

static void remove_scratch(void)
{
    remove(scratch_path);
}

/* path: a mkstemp() template the caller owns for the whole run. */
static void fuzz_scratch_init(char *path)
{
    int fd;

    if (!getenv("SIMTRAIN_DATA"))
        setenv("SIMTRAIN_DATA", "tests/fixtures", 1);
    devnull = fopen("/dev/null", "w");
    scratch_path = path;
    fd = mkstemp(path);
    if (fd >= 0) {
        close(fd);
        atexit(remove_scratch);
    }
}

#endif
