/* test_diag.c - compiler-style diagnostics (positions, carets) and did-you-mean. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "base/diag.h"
#include "base/util.h"

/* Everything written to f since it was opened, as a heap string. */
static char *slurp(FILE *f)
{
    long n = ftell(f);
    char *s = xmalloc((size_t)n + 1);

    rewind(f);
    assert_int_equal(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = '\0';
    fclose(f);
    return s;
}

/* Print one error at text[off, off+len) and return the output. */
static char *error_at(const char *text, size_t off, size_t len, const char *msg)
{
    struct diag_src src = { "f.yaml", text, strlen(text) };
    FILE *f = tmpfile();

    assert_non_null(f);
    diag_error(f, (struct diag_mark){ &src, off, len }, "%s", msg);
    return slurp(f);
}

/* The STYLE.md example, byte for byte: location, message, numbered source line, caret and tildes.
 */
static void test_diag_style_example(void **state)
{
    const char *text = "node:\n  nvlink:\n      bandwith: 450 GB/s\n";
    const char *off = strstr(text, "bandwith");
    char *out = error_at(text, (size_t)(off - text), 8,
                         "unknown key 'bandwith' in 'node.nvlink' (did you mean 'bandwidth'?)");

    (void)state;
    assert_string_equal(out, "f.yaml:3:7: error: unknown key 'bandwith' in 'node.nvlink' (did you "
                             "mean 'bandwidth'?)\n"
                             "    3 |       bandwith: 450 GB/s\n"
                             "      |       ^~~~~~~~\n");
    free(out);
}

/*
 * A line that is not text a terminal may show (invalid UTF-8, an escape sequence, a C1
 * control, an overlong form) is not echoed: the position alone, whichever line it is on
 * (issue 25: only a bad first byte was kept back). UTF-8 text and tabs are echoed.
 */
static void test_diag_no_echo_of_non_text(void **state)
{
    static const char *const bad[] = { "a: 1\nb: caf\xff x\n", "a: 1\nb: \x1b[2J x\n",
                                       "a: 1\nb: \xc2\x9b x\n", "a: 1\nb: \xc0\xaf x\n",
                                       "a: 1\nb: \xed\xa0\x80 x\n" };
    char *out;

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(bad); i++) {
        out = error_at(bad[i], 8, 1, "bad byte");
        assert_string_equal(out, "f.yaml:2:4: error: bad byte\n");
        free(out);
    }
    out = error_at("a: 1\nb: caf\xc3\xa9\tx\n", 8, 1, "fine");
    assert_non_null(strstr(out, "    2 | b: caf\xc3\xa9\tx\n"));
    free(out);
}

/* Lines break at \n, \r\n, \r, NEL, LS and PS as libyaml counts them. */
static void test_diag_line_breaks(void **state)
{
    const char *text = "a\r\nb\rc\xc2\x85"
                       "d\xe2\x80\xa8"
                       "e\xe2\x80\xa9"
                       "f\n";
    struct diag_src src = { "x", text, strlen(text) };
    int line, col;

    (void)state;
    diag_locate(&src, (size_t)(strchr(text, 'f') - text), &line, &col);
    assert_int_equal(line, 6);
    assert_int_equal(col, 1);
    diag_locate(&src, (size_t)(strchr(text, 'c') - text), &line, &col);
    assert_int_equal(line, 3);
    assert_int_equal(col, 1);
}

/* Columns count UTF-8 characters, and the caret lines up under multi-byte text. */
static void test_diag_utf8_columns(void **state)
{
    const char *text = "latency: 2.5 \xc2\xb5xs\n";
    char *out = error_at(text, 15, 2, "bad"); /* "xs", after the 2-byte micro sign */

    (void)state;
    assert_string_equal(out, "f.yaml:1:15: error: bad\n"
                             "    1 | latency: 2.5 \xc2\xb5xs\n"
                             "      |               ^~\n");
    free(out);
}

/* Tabs in the source line are repeated in the caret line so the caret stays aligned. */
static void test_diag_tabs_kept(void **state)
{
    char *out = error_at("\tkey: v\n", 6, 1, "bad");

    (void)state;
    assert_string_equal(out, "f.yaml:1:7: error: bad\n"
                             "    1 | \tkey: v\n"
                             "      | \t     ^\n");
    free(out);
}

/* A mark past the end, a file-only mark and a mark without source all print sensibly. */
static void test_diag_degenerate_marks(void **state)
{
    struct diag_src src = { "f.yaml", "abc", 3 };
    FILE *f = tmpfile();
    char *out;

    (void)state;
    diag_error(f, (struct diag_mark){ &src, 99, 5 }, "eof");
    diag_error(f, (struct diag_mark){ &src, DIAG_NO_POS, 0 }, "file");
    diag_note(f, (struct diag_mark){ NULL, 0, 0 }, "plain %d", 7);
    out = slurp(f);
    assert_string_equal(out, "f.yaml:1:4: error: eof\n"
                             "    1 | abc\n"
                             "      |    ^\n"
                             "f.yaml: error: file\n"
                             "note: plain 7\n");
    free(out);
}

/* A token spanning lines is underlined to the end of its first line only. */
static void test_diag_multiline_token_clipped(void **state)
{
    char *out = error_at("k: {a: 1,\n  b: 2}\n", 3, 14, "bad");

    (void)state;
    assert_string_equal(out, "f.yaml:1:4: error: bad\n"
                             "    1 | k: {a: 1,\n"
                             "      |    ^~~~~~\n");
    free(out);
}

/* Line numbers wider than five digits widen the gutter of both lines. */
static void test_diag_wide_line_numbers(void **state)
{
    size_t n = 123456;
    char *text = xmalloc(n + 8);
    char *out;

    (void)state;
    memset(text, '\n', n);
    strcpy(text + n - 1, "\nx: 1\n");
    out = error_at(text, n, 1, "deep");
    assert_string_equal(out, "f.yaml:123457:1: error: deep\n"
                             "123457 | x: 1\n"
                             "       | ^\n");
    free(out);
    free(text);
}

/* Optimal string alignment distance: substitutions, insertions, adjacent transpositions. */
static void test_diag_edit_distance(void **state)
{
    (void)state;
    assert_int_equal(diag_edit_distance("kitten", "sitting"), 3);
    assert_int_equal(diag_edit_distance("bandwith", "bandwidth"), 1);
    assert_int_equal(diag_edit_distance("ab", "ba"), 1);
    assert_int_equal(diag_edit_distance("", "abc"), 3);
    assert_int_equal(diag_edit_distance("same", "same"), 0);
}

/* Did-you-mean: case-insensitive match first, then closest within a length-scaled limit,
 * ties to the earliest candidate, nothing when everything is far. */
static void test_diag_did_you_mean(void **state)
{
    const char *keys[] = { "dp", "tp", "pp", "cp", "ep", "sequence_parallel", "schedule" };
    const char *units[] = { "GB/s", "gb/s", "Gb/s" };

    (void)state;
    assert_string_equal(diag_did_you_mean("tq", keys, ARRAY_LEN(keys)), "tp");
    assert_string_equal(diag_did_you_mean("xp", keys, ARRAY_LEN(keys)), "dp"); /* tie: first */
    assert_string_equal(diag_did_you_mean("sheduel", keys, ARRAY_LEN(keys)), "schedule");
    assert_string_equal(diag_did_you_mean("Sequence_Parallel", keys, ARRAY_LEN(keys)),
                        "sequence_parallel");
    assert_string_equal(diag_did_you_mean("GB/S", units, ARRAY_LEN(units)), "GB/s");
    assert_null(diag_did_you_mean("optimizer", keys, ARRAY_LEN(keys)));
    assert_null(diag_did_you_mean("x", keys, 0));
}

/* Quoting clips long text at a character boundary and marks the cut. */
static void test_diag_clip(void **state)
{
    char b[8];

    (void)state;
    assert_string_equal(diag_clip(b, sizeof(b), "short", 5), "short");
    assert_string_equal(diag_clip(b, sizeof(b), "abcdefghij", 10), "abcd...");
    assert_string_equal(diag_clip(b, sizeof(b), "abc\xc2\xb5xyz", 8), "abc...");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_diag_style_example),
        cmocka_unit_test(test_diag_line_breaks),
        cmocka_unit_test(test_diag_utf8_columns),
        cmocka_unit_test(test_diag_tabs_kept),
        cmocka_unit_test(test_diag_degenerate_marks),
        cmocka_unit_test(test_diag_multiline_token_clipped),
        cmocka_unit_test(test_diag_wide_line_numbers),
        cmocka_unit_test(test_diag_edit_distance),
        cmocka_unit_test(test_diag_did_you_mean),
        cmocka_unit_test(test_diag_clip),
        cmocka_unit_test(test_diag_no_echo_of_non_text),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
