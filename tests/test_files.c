/* test_files.c - inputs noted, outputs checked: the files of a run (base/files.h). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp(), symlink(), link() */

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/files.h"
#include "base/util.h"

static char dir[64];

static char *at(const char *name)
{
    return xasprintf("%s/%s", dir, name);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/simtrain-files-XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    char *cmd = xasprintf("rm -rf '%s'", dir);
    int rc;

    (void)state;
    rc = system(cmd);
    free(cmd);
    return rc;
}

/*
 * A file read as an input may not be written, by its own path, by another spelling, through a
 * symbolic or a hard link; an unrelated file may; the input is unchanged.
 */
static void test_files_refuse_inputs_by_identity(void **state)
{
    char *in = at("in.yaml"), *sym = at("sym.yaml"), *hard = at("hard.yaml"), *other = at("o.json");
    char *dotted = xasprintf("%s/./in.yaml", dir), msg[512], *text;
    const char *why;
    size_t len;

    (void)state;
    write_text(in, "a: 1\n");
    assert_int_equal(symlink(in, sym), 0);
    assert_int_equal(link(in, hard), 0);
    text = files_read_input(in, 1 << 20, &len, &why);
    assert_non_null(text);
    assert_int_equal(len, 5);
    free(text);
    assert_int_equal(files_check_output(in, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "it is an input of this run"));
    assert_int_equal(files_check_output(dotted, msg, sizeof(msg)), -1);
    assert_int_equal(files_check_output(sym, msg, sizeof(msg)), -1);
    assert_int_equal(files_check_output(hard, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "an input of this run"));
    assert_int_equal(files_check_output(other, msg, sizeof(msg)), 0);
    assert_int_equal(files_check_output("/dev/null", msg, sizeof(msg)), 0);
    errno = 0;
    assert_null(files_open_output(hard));
    assert_int_equal(errno, EEXIST);
    text = read_file(in, &len);
    assert_string_equal(text, "a: 1\n");
    free(text);
    free(dotted);
    free(in);
    free(sym);
    free(hard);
    free(other);
}

/* Only regular files within the size limit are read as inputs. */
static void test_files_read_input_refuses_devices_and_giants(void **state)
{
    char *big = at("big.csv");
    const char *why = NULL;
    size_t len;

    (void)state;
    assert_null(files_read_input("/dev/zero", 1 << 20, &len, &why));
    assert_string_equal(why, "not a regular file");
    assert_null(files_read_input(dir, 1 << 20, &len, &why));
    assert_string_equal(why, "not a regular file");
    write_text(big, "0123456789");
    assert_null(files_read_input(big, 4, &len, &why));
    assert_non_null(strstr(why, "larger than"));
    assert_null(files_read_input("/nonexistent/x", 1 << 20, &len, &why));
    assert_string_equal(why, strerror(ENOENT));
    free(big);
}

/* A write that did not reach the file is an error: /dev/full takes nothing. */
static void test_files_close_reports_lost_writes(void **state)
{
    char *ok = at("ok.txt");
    FILE *f = files_open_output("/dev/full");

    (void)state;
    assert_non_null(f);
    fputs("lost", f);
    errno = 0;
    assert_int_equal(files_close_output(f), -1);
    assert_int_equal(errno, ENOSPC);
    f = files_open_output(ok);
    assert_non_null(f);
    fputs("kept", f);
    assert_int_equal(files_close_output(f), 0);
    free(ok);
}

/* A directory is made only when its parent exists: nothing above it is created. */
static void test_files_make_dir_creates_the_last_component_only(void **state)
{
    char *plot = at("plot"), *deep = at("a/b/c"), *a = at("a"), *file = at("f");
    char msg[512];
    struct stat st;

    (void)state;
    assert_int_equal(files_make_dir(plot, msg, sizeof(msg)), 0);
    assert_int_equal(stat(plot, &st), 0);
    assert_true(S_ISDIR(st.st_mode));
    assert_int_equal(files_make_dir(plot, msg, sizeof(msg)), 0); /* exists: fine */
    assert_int_equal(files_make_dir(deep, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "its parent"));
    assert_int_equal(stat(a, &st), -1); /* not created */
    write_text(file, "x");
    assert_int_equal(files_make_dir(file, msg, sizeof(msg)), -1);
    assert_non_null(strstr(msg, "a file of that name exists"));
    assert_int_equal(files_check_dir("/nonexistent/dir", msg, sizeof(msg)), -1);
    assert_string_equal(msg, "cannot create directory '/nonexistent/dir': its parent "
                             "'/nonexistent' does not exist");
    free(plot);
    free(deep);
    free(a);
    free(file);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_files_refuse_inputs_by_identity),
        cmocka_unit_test(test_files_read_input_refuses_devices_and_giants),
        cmocka_unit_test(test_files_close_reports_lost_writes),
        cmocka_unit_test(test_files_make_dir_creates_the_last_component_only),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
