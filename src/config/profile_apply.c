/*
 * profile_apply.c - binding a selected profile version to a scenario and applying it (see
 * profile.h): which settings the scenario overrides, the values to return to when a rule stops
 * applying, the defaults and rules in order, and the derived defaults after them.
 */
#include "config/profile_internal.h"

#include <string.h>

static void set_bit(uint64_t *bits, int i, bool on)
{
    uint64_t m = (uint64_t)1 << (i % 64);

    bits[i / 64] = on ? bits[i / 64] | m : bits[i / 64] & ~m;
}

double profile_read(const struct field *f, const void *p)
{
    switch (f->type) {
    case FT_FLOAT: {
        double d;
        memcpy(&d, p, sizeof(d));
        return d;
    }
    case FT_QTY:
        if (f->unit == UNIT_TIME) {
            sim_time t;
            memcpy(&t, p, sizeof(t));
            return (double)t;
        } else {
            double d;
            memcpy(&d, p, sizeof(d));
            return d;
        }
    default:
        if (f->size == sizeof(bool)) {
            bool b;
            memcpy(&b, p, sizeof(b));
            return b;
        } else {
            int i;
            memcpy(&i, p, sizeof(i));
            return i;
        }
    }
}

static const struct fw_impl *impl(const struct fw_setting *st)
{
    return st->impl;
}

void profile_bind(struct scenario *s, bool (*given)(const char *key, const void *ctx),
                  const void *ctx)
{
    struct fw_state *fw = &s->fw;

    memset(fw->overridden, 0, sizeof(fw->overridden));
    memset(fw->applied, 0, sizeof(fw->applied));
    for (int i = 0; i < fw->nsettings; i++) {
        const struct fw_impl *im = impl(&fw->settings[i]);

        set_bit(fw->overridden, i, given && given(fw->settings[i].key, ctx));
        memcpy(fw->base[i], (const char *)s + im->off, im->f->size);
    }
}

void profile_override(struct scenario *s, const char *key)
{
    for (int i = 0; i < s->fw.nsettings; i++)
        if (strcmp(s->fw.settings[i].key, key) == 0)
            set_bit(s->fw.overridden, i, true);
}

static bool holds(const struct scenario *s, const struct fw_cond *c)
{
    double v = profile_read(c->f, (const char *)s + c->off);

    switch (c->op) {
    case FW_EQ:
        for (int i = 0; i < c->nvals; i++)
            if (!(v < c->vals[i]) && !(v > c->vals[i]))
                return true;
        return false;
    case FW_NE:
        return v < c->vals[0] || v > c->vals[0];
    case FW_GT:
        return v > c->vals[0];
    case FW_GE:
        return v >= c->vals[0];
    case FW_LT:
        return v < c->vals[0];
    default:
        return v <= c->vals[0];
    }
}

static bool all_hold(const struct scenario *s, const struct fw_impl *im)
{
    for (int i = 0; i < im->ncond; i++)
        if (!holds(s, &im->cond[i]))
            return false;
    return true;
}

void profile_apply(struct scenario *s)
{
    struct fw_state *fw = &s->fw;

    fw->given = 0;
    memset(fw->applied, 0, sizeof(fw->applied));
    for (int i = 0; i < fw->nsettings; i++)
        if (!fw_bit(fw->overridden, i)) {
            const struct fw_impl *im = impl(&fw->settings[i]);
            memcpy((char *)s + im->off, fw->base[i], im->f->size);
        }
    for (int i = 0; i < fw->nsettings; i++) {
        const struct fw_impl *im = impl(&fw->settings[i]);

        if (fw_bit(fw->overridden, i) || !all_hold(s, im))
            continue;
        memcpy((char *)s + im->off, im->val, im->f->size);
        fw->given |= im->f->given;
        set_bit(fw->applied, i, true);
    }
    cfg_derive_defaults(s, s->given | fw->given);
}

const struct fw_setting *profile_applied(const struct scenario *s, const char *key)
{
    const struct fw_setting *last = NULL;

    for (int i = 0; i < s->fw.nsettings; i++)
        if (fw_bit(s->fw.applied, i) && strcmp(s->fw.settings[i].key, key) == 0)
            last = &s->fw.settings[i];
    return last;
}
