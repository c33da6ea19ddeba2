/* test_calibrate.c - measurement reading and parameter fitting (calibrate.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fit/calibrate.h"
#include "model/cost.h"

#define HEADER                                                                                     \
    "kernel,shape,bytes,dtype,gpu,gpus,nodes,algo,proto,time_us,tflops,gbps,date,source\n"

/* An H100-like GPU built in code (peaks: formulas.md 7; 132 SMs: formulas.md 6.2). */
static void make_hw(struct hardware *hw)
{
    memset(hw, 0, sizeof(*hw));
    hw->name = "synthetic";
    hw->path = "";
    hw->gpu.sm_count = 132;
    hw->gpu.mem_bw_Bps = 3.35e12;
    hw->gpu.flops[DT_BF16] = 989e12;
    hw->gpu.flops[DT_FP16] = 989e12;
    hw->gpu.flops[DT_FP8] = 1979e12;
    hw->pcie.bw_Bps = 55e9;
    cost_default_efficiency(&hw->eff);
}

/* The parameters the synthetic data are generated from. */
struct truth {
    double g_bf16, g_fp8, lat_s, mem_bw, launch_s, flash, standard;
    int tile_m, tile_n;
};

static const struct truth T = { 0.78, 0.66, 4e-6, 0.88, 3e-6, 0.55, 0.2, 128, 256 };

/* Transformer-ish GEMM shapes plus the awkward ones the Azure tables use. */
static const double shapes[][3] = {
    { 1024, 1024, 1024 }, { 2048, 2048, 2048 },  { 4096, 4096, 4096 },   { 8192, 8192, 8192 },
    { 1792, 1792, 1792 }, { 16384, 4096, 4096 }, { 16384, 11008, 4096 }, { 16384, 4096, 11008 },
    { 2048, 5120, 5120 }, { 802816, 192, 768 },  { 1024, 2145, 1024 },   { 3000, 3000, 3000 },
    { 640, 640, 8192 },   { 4096, 12288, 4096 },
};

static void add_gemm_rows(struct strbuf *sb, const struct hardware *hw, const struct truth *t,
                          enum dtype dt, double g)
{
    struct efficiency e = hw->eff;

    e.gemm_max = g;
    e.gemm_latency = 0;
    e.tile_m = t->tile_m;
    e.tile_n = t->tile_n;
    e.mem_bw = t->mem_bw;
    for (size_t i = 0; i < ARRAY_LEN(shapes); i++) {
        double s = t->lat_s +
                   cost_gemm_seconds(&hw->gpu, &e, dt, shapes[i][0], shapes[i][1], shapes[i][2], 1);

        sb_addf(sb, "gemm,m=%.0f n=%.0f k=%.0f,,%s,H100,1,1,,,%.17g,,,2025-01-01,synthetic\n",
                shapes[i][0], shapes[i][1], shapes[i][2], dtype_name(dt), s * 1e6);
    }
}

/* A full synthetic measurement file: GEMM (bf16, fp8), copies, attention, two collectives. */
static char *synthetic_csv(const struct hardware *hw, const struct truth *t)
{
    struct strbuf sb;

    sb_init(&sb);
    sb_puts(&sb, HEADER);
    add_gemm_rows(&sb, hw, t, DT_BF16, t->g_bf16);
    add_gemm_rows(&sb, hw, t, DT_FP8, t->g_fp8);
    for (double b = 1 << 20; b <= 4.0 * (1 << 30); b *= 4)
        sb_addf(&sb, "copy,,%.0f,bf16,H100,1,1,,,%.17g,,,2025-01-01,synthetic\n", b,
                (t->launch_s + b / (hw->gpu.mem_bw_Bps * t->mem_bw)) * 1e6);
    sb_addf(&sb,
            "attention_flash,batch=2 heads=16 seq=8192 head_dim=128,,bf16,H100,1,1,,,,%.17g,,"
            "2025-01-01,synthetic\n",
            t->flash * 989);
    sb_addf(&sb, "attention_standard,,,bf16,H100,1,1,,,,%.17g,,2025-01-01,synthetic\n",
            t->standard * 989);
    for (double s = 1024; s <= 8.0 * (1 << 30); s *= 2) {
        double x8 = s * 2.0 * 7 / 8, x16 = s * 2.0 * 15 / 16;

        sb_addf(&sb, "all_reduce,,%.0f,bf16,H100,8,1,nvls,,,,%.17g,2025-01-01,synthetic\n", s,
                x8 / (20e-6 + x8 / 450e9) / 1e9);
        sb_addf(&sb, "all_reduce,,%.0f,bf16,H100,16,2,ring,simple,%.17g,,,2025-01-01,other\n", s,
                (40e-6 + x16 / 90e9) * 1e6);
    }
    return sb_detach(&sb);
}

static int read_text(const char *text, struct meas_set *ms, FILE *diag)
{
    struct csv_error err;
    struct csv_table *t = csv_parse(text, strlen(text), "m.csv", &err);

    assert_non_null(t);
    return calib_parse(t, ms, diag);
}

static void close_rel(double got, double want, double tol)
{
    if (!(fabs(got / want - 1) <= tol))
        fail_msg("got %.9g, want %.9g (tolerance %g)", got, want, tol);
}

/*
 * Noise-free synthetic measurements generated with the simulator's own cost functions are
 * fitted back to their parameters: gemm_max per dtype, latency, tile, mem_bw, launch,
 * attention fractions and alpha-beta per collective group.
 */
static void test_calibrate_recovers_synthetic_parameters(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    char *text;

    (void)state;
    make_hw(&hw);
    text = synthetic_csv(&hw, &T);
    assert_int_equal(read_text(text, &ms, stderr), 0);
    assert_int_equal(ms.n, 2 * 14 + 7 + 2 + 2 * 24);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, stderr), 0);
    assert_int_equal(r.gemm_dtype, DT_BF16);
    close_rel(r.eff.gemm_max, T.g_bf16, 1e-6);
    close_rel(r.gemm_max_dt[DT_FP8], T.g_fp8, 1e-6);
    close_rel(r.eff.gemm_max_fp8, T.g_fp8, 1e-6); /* FP8 GEMMs keep their own efficiency */
    assert_true(llabs(r.eff.gemm_latency - 4000) <= 1);
    assert_int_equal(r.eff.tile_m, 128);
    assert_int_equal(r.eff.tile_n, 256);
    assert_true(r.q_gemm.r2 > 0.999999);
    assert_true(r.q_gemm.worst < 1e-6);
    close_rel(r.eff.mem_bw, T.mem_bw, 1e-9);
    assert_true(llabs(r.eff.launch - 3000) <= 1);
    close_rel(r.eff.attn_flash, T.flash, 1e-12);
    close_rel(r.eff.attn_standard, T.standard, 1e-12);
    assert_int_equal(r.ncoll, 2);
    assert_int_equal(r.coll[0].cal.algo, ALGO_NVLS);
    assert_false(r.coll[0].cal.inter_node);
    assert_true(llabs(r.coll[0].cal.latency - 20000) <= 1);
    close_rel(r.coll[0].cal.bus_bw_Bps, 450e9, 1e-9);
    assert_true(r.coll[1].cal.inter_node);
    assert_int_equal(r.coll[1].cal.proto, PROTO_SIMPLE);
    assert_true(llabs(r.coll[1].cal.latency - 40000) <= 1);
    close_rel(r.coll[1].cal.bus_bw_Bps, 90e9, 1e-9);
    assert_int_equal(r.fitted, CAL_GEMM_MAX | CAL_GEMM_MAX_FP8 | CAL_GEMM_LATENCY | CAL_TILE |
                                   CAL_ATTN_FLASH | CAL_ATTN_STANDARD | CAL_MEM_BW | CAL_LAUNCH);
    calib_result_release(&r);
    calib_release(&ms);
    free(text);
}

/* Rows of `dt` priced at SM clock `mhz`, written with that clock (sm_clock_mhz) or without it. */
static void add_clocked_rows(struct strbuf *sb, const struct hardware *hw, enum dtype dt, double g,
                             double mhz, bool logged, const char *kernel, size_t from, size_t to)
{
    struct efficiency e = hw->eff;
    struct gpu_spec gpu = hw->gpu;

    e.gemm_max = e.gemm_max_fp8 = g;
    e.gemm_latency = 0;
    e.tile_m = 128;
    e.tile_n = 256;
    e.mem_bw = T.mem_bw;
    gpu.clock_sust_Hz[dt] = mhz * 1e6;
    for (size_t i = from; i < to; i++) {
        double s =
            T.lat_s + cost_gemm_seconds(&gpu, &e, dt, shapes[i][0], shapes[i][1], shapes[i][2], 1);

        sb_addf(sb, "%s,m=%.0f n=%.0f k=%.0f,%s,%.17g,", kernel, shapes[i][0], shapes[i][1],
                shapes[i][2], dtype_name(dt), s * 1e6);
        if (logged)
            sb_addf(sb, "%.17g,650\n", mhz);
        else
            sb_puts(sb, ",\n");
    }
}

/*
 * The clock model (cost.h "GEMM peak"): BF16 rows that logged a burst clock of 1975 MHz fix
 * the kernel efficiency, rows without a clock (a long run) then give the sustained clock,
 * 1764 MHz, as a fitted parameter; FP8 gemm_sustained rows that logged 1850 MHz set FP8's
 * sustained clock to their median. The calibration file carries both clocks.
 */
static void test_calibrate_sustained_clock(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct strbuf sb;
    char *text, buf[4096];
    FILE *out = tmpfile();
    size_t n;

    (void)state;
    make_hw(&hw);
    hw.gpu.tensor_cores = 528;
    hw.gpu.tc_flop_clk[DT_BF16] = hw.gpu.tc_flop_clk[DT_FP16] = 1024;
    hw.gpu.tc_flop_clk[DT_FP8] = 2048;
    hw.gpu.clock_max_Hz = 1980e6;
    hw.gpu.clock_sust_Hz[DT_BF16] = hw.gpu.clock_sust_Hz[DT_FP8] = 1600e6; /* wrong on purpose */
    hw.eff.mem_bw = T.mem_bw; /* no memory-bound rows: the roofline uses the hardware's */
    sb_init(&sb);
    sb_puts(&sb, "kernel,shape,dtype,time_us,sm_clock_mhz,power_w\n");
    add_clocked_rows(&sb, &hw, DT_BF16, 0.745, 1975, true, "gemm", 0, 7);
    add_clocked_rows(&sb, &hw, DT_BF16, 0.745, 1764, false, "gemm", 7, ARRAY_LEN(shapes));
    add_clocked_rows(&sb, &hw, DT_FP8, 0.66, 1850, true, "gemm_sustained", 2, 9);
    text = sb_detach(&sb);
    assert_int_equal(read_text(text, &ms, stderr), 0);
    assert_true(ms.rows[0].clock_Hz > 1974e6 && ms.rows[0].power_W > 649);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, stderr), 0);
    close_rel(r.eff.gemm_max, 0.745, 1e-6);
    close_rel(r.clock_sust_Hz[DT_BF16], 1764e6, 1e-6);
    close_rel(r.clock_sust_Hz[DT_FP16], 1764e6, 1e-6); /* the 16-bit twin shares it */
    close_rel(r.clock_sust_Hz[DT_FP8], 1850e6, 1e-12);
    close_rel(r.eff.gemm_max_fp8, 0.66, 1e-6);
    assert_true(r.q_gemm.worst < 1e-6);
    assert_true((r.fitted & (CAL_CLOCK | CAL_GEMM_MAX_FP8)) == (CAL_CLOCK | CAL_GEMM_MAX_FP8));
    calib_write_yaml(&hw, NULL, &ms, &r, "test", out);
    rewind(out);
    n = fread(buf, 1, sizeof(buf) - 1, out);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "clock:\n  sustained:\n    bf16: 1764 MHz"));
    assert_non_null(strstr(buf, "    fp8: 1850 MHz"));
    assert_non_null(strstr(buf, "  gemm_max_fp8: 0.6600"));
    fclose(out);
    calib_result_release(&r);
    calib_release(&ms);
    free(text);
}

/* The tile search finds a different true tile (64 x 128) and does not default to its first. */
static void test_calibrate_tile_choice_follows_data(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct truth t = T;
    char *text;

    (void)state;
    make_hw(&hw);
    t.tile_m = 64;
    t.tile_n = 128;
    text = synthetic_csv(&hw, &t);
    assert_int_equal(read_text(text, &ms, stderr), 0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, stderr), 0);
    assert_int_equal(r.eff.tile_m, 64);
    assert_int_equal(r.eff.tile_n, 128);
    close_rel(r.eff.gemm_max, t.g_bf16, 1e-6);
    calib_result_release(&r);
    calib_release(&ms);
    free(text);
}

/* Noisy times (+-3 %) still give gemm_max within 2 % and a latency within 1 us. */
static void test_calibrate_noisy_gemm(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct strbuf sb;
    struct efficiency e;
    uint64_t seed = 7;

    (void)state;
    make_hw(&hw);
    e = hw.eff;
    e.gemm_max = T.g_bf16;
    e.gemm_latency = 0;
    e.tile_m = 128;
    e.tile_n = 256;
    sb_init(&sb);
    sb_puts(&sb, HEADER);
    for (int rep = 0; rep < 4; rep++)
        for (size_t i = 0; i < ARRAY_LEN(shapes); i++) {
            double s = T.lat_s + cost_gemm_seconds(&hw.gpu, &e, DT_BF16, shapes[i][0], shapes[i][1],
                                                   shapes[i][2], 1);

            s *= 1 + 0.06 * (rng_uniform(&seed) - 0.5);
            sb_addf(&sb, "gemm,m=%.0f n=%.0f k=%.0f,,bf16,H100,1,1,,,%.17g,,,,noisy\n",
                    shapes[i][0], shapes[i][1], shapes[i][2], s * 1e6);
        }
    assert_int_equal(read_text(sb.buf, &ms, stderr), 0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, stderr), 0);
    close_rel(r.eff.gemm_max, T.g_bf16, 0.02);
    assert_true(llabs(r.eff.gemm_latency - 4000) < 1000);
    assert_true(r.q_gemm.worst < 0.06);
    assert_true(r.gemm_max_err[DT_BF16] > 0 && r.gemm_max_err[DT_BF16] < 0.02);
    calib_result_release(&r);
    calib_release(&ms);
    sb_release(&sb);
}

/*
 * Without bf16 rows the fp16 fit is used (same tensor-core peak); with only fp8 rows the fp8
 * fit is used and a warning says so. Best-shape rows alone fit gemm_max but not the latency.
 */
static void test_calibrate_gemm_dtype_fallback(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    FILE *log = tmpfile();
    char buf[512] = "";
    size_t n;

    (void)state;
    make_hw(&hw);
    assert_int_equal(read_text(HEADER "gemm_best,,,fp16,A,1,1,,,,700,,,x\n"
                                      "gemm_best,,,fp8,A,1,1,,,,1400,,,x\n",
                               &ms, stderr),
                     0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, log), 0);
    assert_int_equal(r.gemm_dtype, DT_FP16);
    close_rel(r.eff.gemm_max, 700 / 989.0, 1e-9);
    assert_int_equal(r.fitted & (CAL_GEMM_LATENCY | CAL_TILE), 0);
    calib_result_release(&r);
    calib_release(&ms);

    assert_int_equal(read_text(HEADER "gemm_best,,,fp8,A,1,1,,,,1400,,,x\n", &ms, stderr), 0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, log), 0);
    assert_int_equal(r.gemm_dtype, DT_FP8);
    close_rel(r.eff.gemm_max, 1400 / 1979.0, 1e-9);
    rewind(log);
    n = fread(buf, 1, sizeof(buf) - 1, log);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "no bf16 GEMM rows; gemm_max comes from fp8 rows"));
    calib_result_release(&r);
    calib_release(&ms);
    fclose(log);
}

/* Bad rows are diagnosed with their line, unknown kernels too (with a did-you-mean). */
static void test_calibrate_read_errors(void **state)
{
    struct meas_set ms;
    FILE *diag = tmpfile();
    char buf[2048];
    size_t n;

    (void)state;
    assert_int_equal(read_text(HEADER "gemm,m=1 n=2,,bf16,,,,,,5,,,,\n"         /* line 2 */
                                      "copy,,100,bf17,,,,,,5,,,,\n"             /* line 3 */
                                      "copy,,abc,bf16,,,,,,5,,,,\n"             /* line 4 */
                                      "all_reduce,,1024,,,1,1,,,5,,,,\n"        /* line 5 */
                                      "all_reduce,,1024,,,8,1,magic,,5,,,,\n"   /* line 6 */
                                      "gemm,m=8 n=8 k=8 q=1,,bf16,,,,,,5,,,,\n" /* line 7 */
                                      "copy,,100,bf16,,,,,,,,,,\n"              /* line 8 */
                                      "warp_shuffle,,,,,,,,,1,,,,\n"            /* line 9 */
                                      "gem,,,,,,,,,1,,,,\n"                     /* line 10 */
                                      "copy,,100,bf16,,,,,,5,,,,\n",            /* good */
                               &ms, diag),
                     -1);
    assert_int_equal(ms.n, 1);
    rewind(diag);
    n = fread(buf, 1, sizeof(buf) - 1, diag);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "m.csv:2: error: gemm shape 'm=1 n=2' needs positive m, n and k"));
    assert_non_null(strstr(buf, "m.csv:3: error: unknown dtype 'bf17'"));
    assert_non_null(strstr(buf, "m.csv:4: error: bytes 'abc' is not a non-negative number"));
    assert_non_null(strstr(buf, "m.csv:5: error: collective row needs gpus >= 2"));
    assert_non_null(strstr(buf, "m.csv:6: error: unknown NCCL algorithm 'magic'"));
    assert_non_null(strstr(buf, "m.csv:7: error: shape 'm=8 n=8 k=8 q=1': unknown key 'q'"));
    assert_non_null(strstr(buf, "m.csv:8: error: 'copy' row needs a time or a rate"));
    assert_non_null(strstr(buf, "m.csv:9: error: unknown kernel 'warp_shuffle' "
                                "(src/kernels/README.md lists the kernels)"));
    assert_non_null(strstr(buf, "m.csv:10: error: unknown kernel 'gem' (did you mean 'gemm'?)"));
    calib_release(&ms);
    fclose(diag);

    diag = tmpfile();
    assert_int_equal(read_text("name,value\nx,1\n", &ms, diag), -1);
    rewind(diag);
    n = fread(buf, 1, sizeof(buf) - 1, diag);
    buf[n] = '\0';
    assert_string_equal(buf, "m.csv:1: error: missing required column 'kernel'\n");
    calib_release(&ms);
    fclose(diag);
}

/* The diagnostics of one measurements text (the reader's result in *rc). */
static char *read_diag(const char *text, int *rc)
{
    struct meas_set ms;
    FILE *diag = tmpfile();
    char *buf = xcalloc(4096, 1);

    *rc = read_text(text, &ms, diag);
    rewind(diag);
    buf[fread(buf, 1, 4095, diag)] = '\0';
    fclose(diag);
    calib_release(&ms);
    return buf;
}

/*
 * Every measurement column is range-checked before use, with the row's line and the reason
 * of the bound: a GEMM dimension beyond cuBLAS's int (m = n = k = 1e18), GPU counts beyond
 * any cluster (1e30 would overflow the cast to int), timings and rates beyond any kernel.
 */
static void test_calibrate_read_ranges(void **state)
{
    static const struct {
        const char *row, *want;
    } cases[] = {
        { "gemm,m=1e18 n=1e18 k=1e18,,fp8,,1,1,,,274.1,,,,\n",
          "m.csv:2: error: shape 'm=1e18 n=1e18 k=1e18': 'm' must be a whole number of at most "
          "2147483647 (the int dimensions of cuBLAS and the kernel set)\n" },
        { "gemm,m=8.5 n=8 k=8,,bf16,,1,1,,,5,,,,\n",
          "m.csv:2: error: shape 'm=8.5 n=8 k=8': 'm' must be a whole number of at most "
          "2147483647 (the int dimensions of cuBLAS and the kernel set)\n" },
        { "all_reduce,,1024,,,1e30,1,,,5,,,,\n",
          "m.csv:2: error: gpus '1e30' exceeds 1.04858e+06 (beyond any cluster)\n" },
        { "all_reduce,,1024,,,8.5,1,,,5,,,,\n",
          "m.csv:2: error: gpus '8.5' is not a whole number >= 1\n" },
        { "all_reduce,,1024,,,8,1e9,,,5,,,,\n",
          "m.csv:2: error: nodes '1e9' exceeds 1.04858e+06 (beyond any cluster)\n" },
        { "copy,,1e30,,,1,1,,,5,,,,\n",
          "m.csv:2: error: bytes '1e30' exceeds 1.09951e+12 (1 TiB: more than any GPU holds)\n" },
        { "copy,,100,,,1,1,,,1e12,,,,\n",
          "m.csv:2: error: time_us '1e12' exceeds 1e+09 (1000 s: no kernel of the kernel set "
          "runs that long)\n" },
        { "gemm_best,,,bf16,,1,1,,,,1e9,,,\n",
          "m.csv:2: error: tflops '1e9' exceeds 100000 (ten times any GPU's peak)\n" },
        { "copy,,,,,1,1,,,,,1e9,,\n",
          "m.csv:2: error: gbps '1e9' exceeds 100000 (ten times the fastest HBM)\n" },
        { "attention_flash,batch=1 heads=1e20 seq=8 head_dim=8,,bf16,,1,1,,,,100,,,\n",
          "m.csv:2: error: shape 'batch=1 heads=1e20 seq=8 head_dim=8': 'heads' must be a whole "
          "number of at most 2147483647 (the int dimensions of cuBLAS and the kernel set)\n" },
    };

    (void)state;
    for (size_t i = 0; i < ARRAY_LEN(cases); i++) {
        struct strbuf sb;
        char *got;
        int rc;

        sb_init(&sb);
        sb_puts(&sb, HEADER);
        sb_puts(&sb, cases[i].row);
        got = read_diag(sb.buf, &rc);
        assert_int_equal(rc, -1);
        assert_string_equal(got, cases[i].want);
        free(got);
        sb_release(&sb);
    }
}

/*
 * A header without rows is refused (nothing to fit); so is a row that copies an earlier one
 * in every measured column, whatever its date and source: 50 copies of one GEMM are one
 * measurement, not 50.
 */
static void test_calibrate_refuses_empty_and_copies(void **state)
{
    char *got;
    int rc;

    (void)state;
    got = read_diag(HEADER, &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(got, "m.csv: error: no measurements (a header and no rows): nothing to "
                             "fit\n");
    free(got);
    got = read_diag(HEADER "gemm,m=8 n=8 k=8,,bf16,,1,1,,,5,,,2024,a\n"
                           "gemm,m=8 n=8 k=8,,bf16,,1,1,,,6,,,2024,a\n"
                           "gemm,m=8 n=8 k=8,,bf16,,1,1,,,5,,,2025,b\n"
                           "gemm,m=8 n=8 k=8,,bf16,,1,1,,,5,,,2025,c\n",
                    &rc);
    assert_int_equal(rc, -1);
    assert_string_equal(got, "m.csv:4: error: the row repeats line 2 in every measured column: a "
                             "copied row weighs twice in the fit\n"
                             "m.csv:5: error: the row repeats line 2 in every measured column: a "
                             "copied row weighs twice in the fit\n");
    free(got);
}

/*
 * Repeated timings of one GEMM shape determine gemm_max but not the latency and the tile (a
 * fit of both from one shape is singular): the fit keeps the hardware's latency and says so.
 */
static void test_calibrate_one_shape_fits_gemm_max_only(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    struct strbuf sb;
    uint64_t seed = 3;

    (void)state;
    make_hw(&hw);
    sb_init(&sb);
    sb_puts(&sb, HEADER);
    for (int i = 0; i < 50; i++)
        sb_addf(&sb, "gemm,m=4096 n=4096 k=4096,,bf16,H100,1,1,,,%.17g,,,,rep\n",
                250.0 * (1 + 0.02 * (rng_uniform(&seed) - 0.5)));
    assert_int_equal(read_text(sb.buf, &ms, stderr), 0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, NULL), 0);
    assert_true(r.fitted & CAL_GEMM_MAX);
    assert_false(r.fitted & (CAL_GEMM_LATENCY | CAL_TILE));
    assert_int_equal(r.eff.gemm_latency, hw.eff.gemm_latency);
    assert_non_null(strstr(r.q_gemm.note, "latency and tile not fitted"));
    calib_result_release(&r);
    calib_release(&ms);
    sb_release(&sb);
}

/* The log of calib_fit() on a measurements text, which must fail (heap string). */
static char *fit_refused(const char *text)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    FILE *log = tmpfile();
    char *buf = xcalloc(2048, 1);

    make_hw(&hw);
    assert_int_equal(read_text(text, &ms, stderr), 0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, log), -1);
    rewind(log);
    buf[fread(buf, 1, 2047, log)] = '\0';
    fclose(log);
    calib_release(&ms);
    return buf;
}

/*
 * Fits the inputs cannot determine are refused with the reason: a timed row per parameter
 * (no residual left to judge the fit: it printed sigma 0), a gemm_max above the peak (one
 * small shape at 400 TFLOP/s is faster than the model allows with a 5 us latency: it
 * "fitted" 3.6), and a row faster than the hardware's peak.
 */
static void test_calibrate_refuses_undetermined_fits(void **state)
{
    char *log;

    (void)state;
    log = fit_refused(HEADER "gemm,m=4096 n=4096 k=4096,,bf16,H100,1,1,,,,700,,,x\n");
    assert_string_equal(log, "calibrate: error: GEMM: 1 timed row for 1 parameter: a fit needs "
                             "more rows than parameters to be judged; add shapes or repeated "
                             "timings\n");
    free(log);
    log = fit_refused(HEADER "gemm,m=1024 n=1024 k=1024,,bf16,H100,1,1,,,5,,,,x\n"
                             "gemm,m=1024 n=1024 k=1024,,bf16,H100,1,1,,,5.1,,,,x\n");
    assert_non_null(strstr(log, "calibrate: error: GEMM: gemm_max for bf16 comes out at "));
    assert_non_null(strstr(log, "above 1 (the peak): the rows are faster than the model allows"));
    free(log);
    log = fit_refused(HEADER "gemm_best,,,bf16,H100,1,1,,,,1200,,,x\n"
                             "copy,,,,H100,1,1,,,,,4000,,x\n");
    assert_string_equal(log, "m.csv:2: error: achieved 1200 TFLOP/s is above the bf16 peak of "
                             "989 TFLOP/s of 'synthetic'\n"
                             "m.csv:3: error: achieved 4000 GB/s is above the memory peak of "
                             "3350 GB/s of 'synthetic'\n");
    free(log);
}

/* The calibration file names exactly the fitted keys, in the documented units. */
static void test_calibrate_writes_yaml(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct calib_result r;
    struct calib_options opt = { .gemm_dtype = DT_BF16 };
    FILE *out = tmpfile();
    char buf[8192];
    size_t n;

    (void)state;
    make_hw(&hw);
    assert_int_equal(read_text(HEADER "copy,,,bf16,H100,1,1,,,,,2900,,\"Azure, \"\"stream\"\"\"\n"
                                      "all_reduce,,1048576,,H100,8,1,,,10,,,,nccl\n"
                                      "all_reduce,,1073741824,,H100,8,1,,,2500,,,,nccl\n",
                               &ms, stderr),
                     0);
    assert_int_equal(calib_fit(&hw, &ms, &opt, &r, stderr), 0);
    calib_write_yaml(&hw, NULL, &ms, &r, "simtrain calibrate m.csv --hardware synthetic", out);
    rewind(out);
    n = fread(buf, 1, sizeof(buf) - 1, out);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "hardware: synthetic\n"));
    assert_non_null(strstr(buf, "source: \"Azure, \\\"stream\\\"; nccl\"\n"));
    assert_non_null(strstr(buf, "  mem_bw: 0.8657\n")); /* 2900 / 3350 */
    assert_null(strstr(buf, "gemm_max:"));
    assert_null(strstr(buf, "launch:"));
    assert_null(strstr(buf, "attn_flash"));
    assert_non_null(strstr(buf, "  - {op: all_reduce, algo: auto, proto: auto, scope: intra, "));
    assert_non_null(strstr(buf, "bus_bandwidth: "));
    assert_non_null(strstr(buf, "#   simtrain calibrate m.csv --hardware synthetic\n"));
    calib_result_release(&r);
    calib_release(&ms);
    fclose(out);
}

/*
 * --check compares the hardware's current parameters with the rows: exact parameters give
 * zero error; a collective without a calibrated figure has no model.
 */
static void test_calibrate_check(void **state)
{
    struct hardware hw;
    struct meas_set ms;
    struct coll_calib cal = { COLL_ALL_REDUCE, ALGO_AUTO, PROTO_AUTO, false, 20000, 450e9 };
    FILE *out = tmpfile();
    char *text, buf[65536];
    size_t n;

    (void)state;
    make_hw(&hw);
    hw.eff.gemm_max = T.g_bf16;
    hw.eff.gemm_latency = 4000;
    hw.eff.tile_m = 128;
    hw.eff.tile_n = 256;
    hw.eff.mem_bw = T.mem_bw;
    hw.eff.launch = 3000;
    hw.eff.attn_flash = T.flash;
    hw.eff.attn_standard = T.standard;
    hw.coll_cal = &cal;
    hw.ncoll_cal = 1;
    text = synthetic_csv(&hw, &T);
    assert_int_equal(read_text(text, &ms, stderr), 0);
    /* every row is compared except the 24 inter-node ring rows: no calibrated figure for them */
    assert_int_equal(calib_check(&hw, &ms, false, out), ms.n - 24);
    rewind(out);
    n = fread(buf, 1, sizeof(buf) - 1, out);
    buf[n] = '\0';
    assert_non_null(strstr(buf, "no model"));
    for (int i = 0; i < ms.n; i++) {
        const struct measurement *m = &ms.rows[i];
        double pred = calib_predict_rate(&hw, &hw.eff, m);

        if (m->kind == MEAS_COLL && m->nodes > 1)
            assert_true(pred <= 0);
        else if (m->dtype != DT_FP8)
            close_rel(pred, m->rate, 1e-6);
    }
    calib_release(&ms);
    free(text);
    fclose(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_calibrate_recovers_synthetic_parameters),
        cmocka_unit_test(test_calibrate_sustained_clock),
        cmocka_unit_test(test_calibrate_tile_choice_follows_data),
        cmocka_unit_test(test_calibrate_noisy_gemm),
        cmocka_unit_test(test_calibrate_gemm_dtype_fallback),
        cmocka_unit_test(test_calibrate_read_errors),
        cmocka_unit_test(test_calibrate_read_ranges),
        cmocka_unit_test(test_calibrate_refuses_empty_and_copies),
        cmocka_unit_test(test_calibrate_one_shape_fits_gemm_max_only),
        cmocka_unit_test(test_calibrate_refuses_undetermined_fits),
        cmocka_unit_test(test_calibrate_writes_yaml),
        cmocka_unit_test(test_calibrate_check),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
