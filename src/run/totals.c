/* totals.c - time to train, GPU-hours, cost and energy of a step time; see totals.h. */
#include "run/totals.h"

#include <stdio.h>
#include <string.h>

#include "base/util.h"

void train_totals(const struct scenario *s, double step_s, struct train_totals *out)
{
    double tokens_per_step = (double)s->train.global_batch * s->train.seq_len;

    memset(out, 0, sizeof(*out));
    out->have_price = s->train.price_gpu_hour > 0;
    if (out->have_price)
        out->per_step_usd = step_s * s->gpus / 3600.0 * s->train.price_gpu_hour;
    if (s->train.tokens <= 0 || tokens_per_step <= 0 || step_s <= 0)
        return;
    out->have_tokens = true;
    out->tokens = s->train.tokens;
    out->steps = s->train.tokens / tokens_per_step;
    out->seconds = out->steps * step_s;
    out->gpu_hours = out->seconds * s->gpus / 3600.0;
    if (out->have_price)
        out->cost_usd = out->gpu_hours * s->train.price_gpu_hour;
    out->have_power = s->hw.gpu.power_W > 0;
    if (out->have_power)
        out->energy_J = s->hw.gpu.power_W * s->gpus * out->seconds;
}

void totals_fmt_duration(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens)
        snprintf(buf, n, "-");
    else if (t->seconds >= 2 * 86400.0)
        snprintf(buf, n, "%.1f d", t->seconds / 86400.0);
    else if (t->seconds >= 3600.0)
        snprintf(buf, n, "%.1f h", t->seconds / 3600.0);
    else
        snprintf(buf, n, "%.1f min", t->seconds / 60.0);
}

/* Three significant digits with an SI prefix: "$1.54 M", "432 MWh". */
static void fmt_scaled(double v, const char *pre, const char *unit, char *buf, size_t n)
{
    static const char *const si[] = { "", "k", "M", "G", "T" };
    size_t i = 0;

    while (v >= 999.5 && i + 1 < ARRAY_LEN(si)) {
        v /= 1000;
        i++;
    }
    snprintf(buf, n, "%s%.3g%s%s%s", pre, v, *si[i] || *unit ? " " : "", si[i], unit);
}

void totals_fmt_cost(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens || !t->have_price)
        snprintf(buf, n, "-");
    else
        fmt_scaled(t->cost_usd, "$", "", buf, n);
}

void totals_fmt_energy(const struct train_totals *t, char *buf, size_t n)
{
    if (!t->have_tokens || !t->have_power)
        snprintf(buf, n, "-");
    else
        fmt_scaled(t->energy_J / 3.6e3, "", "Wh", buf, n); /* 1 Wh = 3600 J */
}
