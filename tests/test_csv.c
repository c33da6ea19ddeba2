/* test_csv.c - the RFC 4180 reader (csv.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "base/csv.h"
#include "support.h"

static struct csv_table *parse(const char *text, struct csv_error *err)
{
    return csv_parse(text, strlen(text), "t.csv", err);
}

/* Quoted fields keep commas, doubled quotes and line breaks; CRLF ends records. */
static void test_csv_quoted_fields(void **state)
{
    struct csv_error err;
    struct csv_table *t = parse("id,text,n\r\n"
                                "a,\"x, y\",1\r\n"
                                "b,\"say \"\"hi\"\"\",2\r\n"
                                "c,\"two\r\nlines\",3\r\n"
                                "d,,4\r\n",
                                &err);

    (void)state;
    assert_non_null(t);
    assert_int_equal(t->ncols, 3);
    assert_int_equal(t->nrows, 4);
    assert_string_equal(csv_field(t, 0, 1), "x, y");
    assert_string_equal(csv_field(t, 1, 1), "say \"hi\"");
    assert_string_equal(csv_field(t, 2, 1), "two\r\nlines");
    assert_string_equal(csv_field(t, 2, 2), "3");
    assert_string_equal(csv_field(t, 3, 1), "");
    /* record lines count the embedded break: d starts on line 6 */
    assert_int_equal(t->rows[0].line, 2);
    assert_int_equal(t->rows[2].line, 4);
    assert_int_equal(t->rows[3].line, 6);
    csv_free(t);
}

/* Columns are found by name; a short record reads its missing fields as "". */
static void test_csv_columns_and_short_records(void **state)
{
    struct csv_error err;
    struct csv_table *t = parse("a,b,c\n1,2\n4,5,6,7\n", &err);

    (void)state;
    assert_non_null(t);
    assert_int_equal(csv_column(t, "c"), 2);
    assert_int_equal(csv_column(t, "C"), -1);
    assert_int_equal(t->rows[0].nfields, 2);
    assert_string_equal(csv_field(t, 0, 2), "");
    assert_string_equal(csv_field(t, 0, -1), "");
    assert_int_equal(t->rows[1].nfields, 4);
    assert_string_equal(csv_field(t, 1, 3), "7");
    csv_free(t);
}

/* A trailing comma is one more empty field; a file without a final newline is complete. */
static void test_csv_trailing_comma_and_no_final_newline(void **state)
{
    struct csv_error err;
    struct csv_table *t = parse("a,b\nx,\ny,\"z\"", &err);

    (void)state;
    assert_non_null(t);
    assert_int_equal(t->nrows, 2);
    assert_int_equal(t->rows[0].nfields, 2);
    assert_string_equal(csv_field(t, 0, 1), "");
    assert_string_equal(csv_field(t, 1, 1), "z");
    csv_free(t);
}

/* A UTF-8 BOM is skipped and blank lines (LF or CRLF) are ignored. */
static void test_csv_bom_and_blank_lines(void **state)
{
    struct csv_error err;
    struct csv_table *t = parse("\xEF\xBB\xBFid,v\n\n1,2\r\n\r\n3,4\n\n", &err);

    (void)state;
    assert_non_null(t);
    assert_string_equal(t->header[0], "id");
    assert_int_equal(t->nrows, 2);
    assert_int_equal(t->rows[1].line, 5);
    csv_free(t);
}

/* An unterminated quote is reported at the opening quote's line and column. */
static void test_csv_unterminated_quote(void **state)
{
    struct csv_error err;

    (void)state;
    assert_null(parse("a,b\n1,2\n3,\"open\nstill open\n", &err));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 3);
    assert_string_equal(err.msg, "unterminated quoted field");
}

/* Text after a closing quote and a bare quote inside a field are errors with positions. */
static void test_csv_stray_quotes(void **state)
{
    struct csv_error err;

    (void)state;
    assert_null(parse("a,b\n\"x\"y,2\n", &err));
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 4);
    assert_string_equal(err.msg, "unexpected 'y' after a closing quote");
    assert_null(parse("a,b\n1,ab\"c\n", &err));
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 5);
    /* runs of plain bytes, a comma and a line break inside quotes: the column still counts */
    assert_null(parse("a,b\n\"long text, with comma\nand break\"z,2\n", &err));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 11);
    assert_string_equal(err.msg, "unexpected 'z' after a closing quote");
}

/* A NUL byte in a field, quoted or not, is refused at its line and column, not cut short. */
static void test_csv_nul_byte(void **state)
{
    static const char unquoted[] = "a,b\n1,x\0y\n";
    static const char quoted[] = "a,b\n1,2\n\"p\0\",3\n";
    struct csv_error err;

    (void)state;
    assert_null(csv_parse(unquoted, sizeof(unquoted) - 1, "t.csv", &err));
    assert_int_equal(err.line, 2);
    assert_int_equal(err.col, 4);
    assert_string_equal(err.msg, "NUL byte in a field (a CSV file is text)");
    assert_null(csv_parse(quoted, sizeof(quoted) - 1, "t.csv", &err));
    assert_int_equal(err.line, 3);
    assert_int_equal(err.col, 3);
}

/* Empty files and bad headers are rejected. */
static void test_csv_bad_header(void **state)
{
    struct csv_error err;

    (void)state;
    assert_null(parse("", &err));
    assert_string_equal(err.msg, "no header row (the file is empty)");
    assert_null(parse("\n\na,b,a\n1,2,3\n", &err));
    assert_int_equal(err.line, 3);
    assert_string_equal(err.msg, "duplicate column 'a' in the header");
    assert_null(parse("a,,c\n", &err));
    assert_string_equal(err.msg, "empty name for column 2 of the header");
}

/* A missing file is an error naming the path. */
static void test_csv_missing_file(void **state)
{
    struct csv_error err;

    (void)state;
    assert_null(csv_read_file("/nonexistent/x.csv", &err));
    assert_int_equal(err.line, 0);
    assert_non_null(strstr(err.msg, "/nonexistent/x.csv"));
}

/*
 * The shipped validation file reads whole: one row per record (counted by a quote-aware
 * reference, test_csv_records()), every row with every column of the header, the quoted
 * multi-sentence notes intact.
 */
static void test_csv_reads_runs_file(void **state)
{
    struct csv_error err;
    struct csv_table *t = csv_read_file(SIMTRAIN_SOURCE_DIR "/tests/validation/runs.csv", &err);
    int notes;

    (void)state;
    assert_non_null(t);
    assert_int_equal(t->nrows,
                     test_csv_records(SIMTRAIN_SOURCE_DIR "/tests/validation/runs.csv") - 1);
    assert_true(t->nrows > 0);
    assert_true(csv_column(t, "id") == 0 && csv_column(t, "value") > 0);
    for (int i = 0; i < t->nrows; i++)
        assert_int_equal(t->rows[i].nfields, t->ncols);
    notes = csv_column(t, "notes");
    assert_true(notes >= 0);
    assert_non_null(strstr(csv_field(t, 0, notes), "eq.(3) F = 96*B*s*l*h^2"));
    assert_string_equal(csv_field(t, 0, csv_column(t, "id")), "sc21-t1-gpt1.7b");
    csv_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_csv_quoted_fields),
        cmocka_unit_test(test_csv_columns_and_short_records),
        cmocka_unit_test(test_csv_trailing_comma_and_no_final_newline),
        cmocka_unit_test(test_csv_bom_and_blank_lines),
        cmocka_unit_test(test_csv_unterminated_quote),
        cmocka_unit_test(test_csv_stray_quotes),
        cmocka_unit_test(test_csv_nul_byte),
        cmocka_unit_test(test_csv_bad_header),
        cmocka_unit_test(test_csv_missing_file),
        cmocka_unit_test(test_csv_reads_runs_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
