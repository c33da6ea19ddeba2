/*
 * calibrate_out.c - what `simtrain calibrate` prints and writes
 * (calibrate.h): the calibration file (YAML), the summary of a fit, and the
 * check of a hardware description's current parameters against measurements.
 */
#include "fit/calibrate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fit/fit.h"

/* ---- output ---------------------------------------------------------------- */

static const char *const kind_label[MEAS_COUNT] = {
    [MEAS_GEMM] = "gemm",
    [MEAS_GEMM_BEST] = "gemm (best shape)",
    [MEAS_ATTN_FLASH] = "attention (flash)",
    [MEAS_ATTN_STD] = "attention (standard)",
    [MEAS_MEMBOUND] = "memory-bound",
    [MEAS_H2D] = "host to device",
    [MEAS_D2H] = "device to host",
    [MEAS_D2D] = "device to device",
    [MEAS_COLL] = "collective",
};

static void yaml_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', out);
        if ((unsigned char)*s < 0x20)
            fputc(' ', out);
        else
            fputc(*s, out);
    }
    fputc('"', out);
}

/* The distinct `source` values, joined by "; ", in first-seen order. */
static void write_sources(FILE *out, const struct meas_set *ms)
{
    struct strbuf sb;

    sb_init(&sb);
    sb_puts(&sb, "");
    for (int i = 0; i < ms->n; i++) {
        const char *s = ms->rows[i].source;
        bool seen = !*s;

        for (int j = 0; j < i && !seen; j++)
            seen = !strcmp(ms->rows[j].source, s);
        if (seen)
            continue;
        if (sb.len)
            sb_puts(&sb, "; ");
        sb_puts(&sb, s);
    }
    yaml_string(out, sb.len ? sb.buf : "unknown");
    sb_release(&sb);
}

static void write_quality(FILE *out, const char *name, const struct calib_quality *q)
{
    fprintf(out,
            "  %s: {points: %d, r2: %.4f, worst_residual_pct: %.1f, worst_line: %d, note: ", name,
            q->points, q->r2, 100 * q->worst, q->worst_line);
    yaml_string(out, q->note);
    fputs("}\n", out);
}

/* The sustained SM clocks the GEMM fit determined, and the peak each gives. */
static void write_clocks(FILE *out, const struct hardware *hw, const struct calib_result *r)
{
    if (!(r->fitted & CAL_CLOCK))
        return;
    fputs("clock:\n  sustained:\n", out);
    for (int d = 0; d < DT_COUNT; d++)
        if (r->clock_sust_Hz[d] > 0)
            fprintf(out, "    %s: %.0f MHz    # tensor-core peak %.1f TFLOP/s at this clock\n",
                    dtype_name((enum dtype)d), r->clock_sust_Hz[d] / 1e6,
                    hw->gpu.tensor_cores * hw->gpu.tc_flop_clk[d] * r->clock_sust_Hz[d] / 1e12);
}

void calib_write_yaml(const struct hardware *hw, const char *for_name, const struct meas_set *ms,
                      const struct calib_result *r, const char *command, FILE *out)
{
    const struct efficiency *e = &r->eff;
    const char *name = for_name ? for_name : hw->name;

    fprintf(out, "# Calibration of %s, written by `simtrain calibrate` (docs/calibration.md).\n",
            name);
    if (strcmp(name, hw->name))
        fprintf(out,
                "# Fitted against the peaks of %s, where the measurements were taken; the\n"
                "# fractions carry over to %s (same GPU die and interconnect).\n",
                hw->name, name);
    fprintf(out, "# Regenerate instead of editing:\n#   %s\n", command);
    fprintf(out, "hardware: %s\nsource: ", name);
    write_sources(out, ms);
    fputs("\nefficiency:\n", out);
    if (r->fitted & CAL_GEMM_MAX)
        fprintf(out, "  gemm_max: %.4f        # %s GEMM, +-%.4f (1 sigma)\n", e->gemm_max,
                dtype_name(r->gemm_dtype), r->gemm_max_err[r->gemm_dtype]);
    if (r->fitted & CAL_GEMM_MAX_FP8)
        fprintf(out, "  gemm_max_fp8: %.4f    # +-%.4f (1 sigma)\n", e->gemm_max_fp8,
                r->gemm_max_err[DT_FP8]);
    if (r->fitted & CAL_GEMM_LATENCY)
        fprintf(out, "  gemm_latency: %.4g us\n", e->gemm_latency / 1e3);
    if (r->fitted & CAL_TILE)
        fprintf(out, "  tile_m: %d\n  tile_n: %d\n", e->tile_m, e->tile_n);
    if (r->fitted & CAL_ATTN_FLASH)
        fprintf(out, "  attn_flash: %.4f\n", e->attn_flash);
    if (r->fitted & CAL_ATTN_STANDARD)
        fprintf(out, "  attn_standard: %.4f\n", e->attn_standard);
    if (r->fitted & CAL_MEM_BW)
        fprintf(out, "  mem_bw: %.4f\n", e->mem_bw);
    if (r->fitted & CAL_LAUNCH)
        fprintf(out, "  launch: %.4g us\n", e->launch / 1e3);
    write_clocks(out, hw, r);
    if (r->ncoll && !r->coll_report_only)
        fputs("collectives:\n", out);
    for (int i = 0; i < r->ncoll && !r->coll_report_only; i++) {
        const struct coll_calib *c = &r->coll[i].cal;

        fprintf(out, "  - {op: %s, algo: %s, proto: %s, scope: %s, ", coll_op_name(c->op),
                algo_name(c->algo), proto_name(c->proto), c->inter_node ? "inter" : "intra");
        fprintf(out, "latency: %.4g us, bus_bandwidth: %.4g GB/s}\n", c->latency / 1e3,
                c->bus_bw_Bps / 1e9);
    }
    fputs("fit:\n", out);
    if (r->q_gemm.points) {
        write_quality(out, "gemm", &r->q_gemm);
        for (int d = 0; d < DT_COUNT; d++)
            if (r->gemm_max_dt[d] > 0)
                fprintf(out, "  gemm_max_%s: %.4f\n", dtype_name((enum dtype)d), r->gemm_max_dt[d]);
    }
    if (r->q_attn.points)
        write_quality(out, "attention", &r->q_attn);
    if (r->q_mem.points)
        write_quality(out, "memory", &r->q_mem);
    for (int i = 0; i < r->ncoll; i++) {
        char key[96];

        snprintf(key, sizeof(key), "%s_%s_%s_%s", coll_op_name(r->coll[i].cal.op),
                 algo_name(r->coll[i].cal.algo), proto_name(r->coll[i].cal.proto),
                 r->coll[i].cal.inter_node ? "inter" : "intra");
        write_quality(out, key, &r->coll[i].q);
        if (r->coll_report_only)
            fprintf(out, "  %s_alpha_beta: {latency: %.4g us, bus_bandwidth: %.4g GB/s}\n", key,
                    r->coll[i].cal.latency / 1e3, r->coll[i].cal.bus_bw_Bps / 1e9);
    }
    if (r->ncoll && r->coll_report_only)
        fputs(
            "  collectives_note: \"alpha-beta fits recorded here only (--no-collectives): the NCCL "
            "model is not overridden\"\n",
            out);
    for (int k = 0; k < 3; k++)
        if (r->host_Bps[k] > 0)
            fprintf(out, "  %s_bandwidth: %.4g GB/s\n",
                    k == 0   ? "h2d"
                    : k == 1 ? "d2h"
                             : "d2d",
                    r->host_Bps[k] / 1e9);
}

static void print_quality(FILE *out, const char *what, const struct calib_quality *q)
{
    if (!q->points) {
        fprintf(out, "  %-26s %s\n", what, q->note);
        return;
    }
    fprintf(out, "  %-26s %3d rows  R^2 %6.3f  worst %5.1f %% (line %d)  %s\n", what, q->points,
            q->r2, 100 * q->worst, q->worst_line, q->note);
}

void calib_print_summary(const struct hardware *hw, const struct calib_result *r, FILE *out)
{
    const struct efficiency *e = &r->eff;

    fprintf(out, "%s: fitted parameters\n", hw->name);
    if (r->fitted & CAL_GEMM_MAX) {
        fprintf(out, "  gemm_max       %.4f (%s)", e->gemm_max, dtype_name(r->gemm_dtype));
        for (int d = 0; d < DT_COUNT; d++)
            if (r->gemm_max_dt[d] > 0)
                fprintf(out, "  [%s %.4f +- %.4f]", dtype_name((enum dtype)d), r->gemm_max_dt[d],
                        r->gemm_max_err[d]);
        fputc('\n', out);
    }
    if (r->fitted & CAL_GEMM_MAX_FP8)
        fprintf(out, "  gemm_max_fp8   %.4f\n", e->gemm_max_fp8);
    for (int d = 0; d < DT_COUNT; d++)
        if (r->clock_sust_Hz[d] > 0)
            fprintf(out, "  sustained clock %s %.0f MHz\n", dtype_name((enum dtype)d),
                    r->clock_sust_Hz[d] / 1e6);
    if (r->fitted & CAL_GEMM_LATENCY)
        fprintf(out, "  gemm_latency   %.3g us, tile %d x %d\n", e->gemm_latency / 1e3, e->tile_m,
                e->tile_n);
    if (r->fitted & CAL_ATTN_FLASH)
        fprintf(out, "  attn_flash     %.4f\n", e->attn_flash);
    if (r->fitted & CAL_ATTN_STANDARD)
        fprintf(out, "  attn_standard  %.4f\n", e->attn_standard);
    if (r->fitted & CAL_MEM_BW)
        fprintf(out, "  mem_bw         %.4f (%.0f GB/s achieved)\n", e->mem_bw,
                e->mem_bw * hw->gpu.mem_bw_Bps / 1e9);
    if (r->fitted & CAL_LAUNCH)
        fprintf(out, "  launch         %.3g us\n", e->launch / 1e3);
    for (int i = 0; i < r->ncoll; i++) {
        const struct coll_calib *c = &r->coll[i].cal;

        fprintf(out, "  %s %s/%s %s: latency %.3g us, bus bandwidth %.1f GB/s%s\n",
                coll_op_name(c->op), algo_name(c->algo), proto_name(c->proto),
                c->inter_node ? "inter-node" : "intra-node", c->latency / 1e3, c->bus_bw_Bps / 1e9,
                r->coll_report_only ? " (recorded under fit: only)" : "");
    }
    for (int k = 0; k < 3; k++)
        if (r->host_Bps[k] > 0)
            fprintf(out, "  %-14s %.1f GB/s (median achieved)\n", kind_label[MEAS_H2D + k],
                    r->host_Bps[k] / 1e9);
    fputs("fit quality (R^2 of achieved rate; worst = largest |t_pred/t_meas - 1|)\n", out);
    print_quality(out, "gemm", &r->q_gemm);
    print_quality(out, "attention", &r->q_attn);
    print_quality(out, "memory-bound", &r->q_mem);
    for (int i = 0; i < r->ncoll; i++) {
        char what[64];

        snprintf(what, sizeof(what), "%s %s/%s", coll_op_name(r->coll[i].cal.op),
                 algo_name(r->coll[i].cal.algo), proto_name(r->coll[i].cal.proto));
        print_quality(out, what, &r->coll[i].q);
    }
}

/* ---- check: current parameters against measurements ----------------------- */

static void format_rate(char *buf, size_t n, const struct measurement *m, double rate)
{
    bool flops = m->kind <= MEAS_ATTN_STD;

    if (!(rate > 0))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, "%.4g %s", rate / (flops ? 1e12 : 1e9),
                 flops                  ? "TFLOP/s"
                 : m->kind == MEAS_COLL ? "GB/s bus"
                                        : "GB/s");
}

static void format_what(char *buf, size_t n, const struct measurement *m)
{
    if (m->kind == MEAS_COLL)
        snprintf(buf, n, "%.0f B, %d GPUs%s", m->bytes, m->gpus,
                 m->nodes > 1 ? ", multi-node" : "");
    else if (*m->shape)
        snprintf(buf, n, "%s", m->shape);
    else if (m->bytes > 0)
        snprintf(buf, n, "%.0f B", m->bytes);
    else
        snprintf(buf, n, "-");
}

int calib_check(const struct hardware *hw, const struct meas_set *ms, bool markdown, FILE *out)
{
    int count[MEAS_COUNT] = { 0 }, compared = 0;
    double *by_kind[MEAS_COUNT];

    for (int k = 0; k < MEAS_COUNT; k++)
        by_kind[k] = xmalloc((size_t)(ms->n ? ms->n : 1) * sizeof(double));
    if (markdown)
        fputs("| kernel | shape or size | dtype | measured | predicted | error |\n"
              "|---|---|---|---:|---:|---:|\n",
              out);
    else
        fprintf(out, "%-20s %-34s %-5s %18s %18s %8s\n", "kernel", "shape or size", "dtype",
                "measured", "predicted", "error");
    for (int i = 0; i < ms->n; i++) {
        const struct measurement *m = &ms->rows[i];
        double pred = calib_predict_rate(hw, &hw->eff, m);
        char what[96], meas_s[40], pred_s[40], err_s[24];

        format_what(what, sizeof(what), m);
        format_rate(meas_s, sizeof(meas_s), m, m->rate);
        format_rate(pred_s, sizeof(pred_s), m, pred);
        if (pred > 0) {
            double e = 100 * (pred - m->rate) / m->rate;

            snprintf(err_s, sizeof(err_s), "%+.1f%%", e);
            by_kind[m->kind][count[m->kind]++] = fabs(e);
            compared++;
        } else {
            snprintf(err_s, sizeof(err_s), "no model");
        }
        if (markdown)
            fprintf(out, "| %s | %s | %s | %s | %s | %s |\n", m->kernel, what,
                    m->kind == MEAS_COLL ? "-" : dtype_name(m->dtype), meas_s, pred_s, err_s);
        else
            fprintf(out, "%-20s %-34.34s %-5s %18s %18s %8s\n", m->kernel, what,
                    m->kind == MEAS_COLL ? "-" : dtype_name(m->dtype), meas_s, pred_s, err_s);
    }
    fputs(markdown ? "\n| class | n | median abs error | max abs error |\n|---|---:|---:|---:|\n"
                   : "\nclass                      n   median|e|    max|e|\n",
          out);
    for (int k = 0; k < MEAS_COUNT; k++) {
        double med, mx;

        if (!count[k])
            continue;
        mx = fit_quantile(by_kind[k], count[k], 1.0);
        med = fit_quantile(by_kind[k], count[k], 0.5);
        if (markdown)
            fprintf(out, "| %s | %d | %.1f %% | %.1f %% |\n", kind_label[k], count[k], med, mx);
        else
            fprintf(out, "%-22s %5d %9.1f%% %9.1f%%\n", kind_label[k], count[k], med, mx);
    }
    for (int k = 0; k < MEAS_COUNT; k++)
        free(by_kind[k]);
    return compared;
}
