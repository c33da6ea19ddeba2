/* memory.c - see memory.h. */
#include "memory.h"

#include "strategy.h"

/*
 * Optimizer state bytes per parameter:
 * AdamW: fp32 m and v, 8 B (ZERO §3.1, K = 12 with the 4 B master copy).
 * 8-bit Adam (bitsandbytes): uint8 state1 and state2 plus one fp32 absmax per
 * 256-element block for each: 2 + 2 * 4 / 256 = 2.03125 B (BNB optimizer.py).
 * SGD with momentum: one fp32 buffer, 4 B.
 * Adafactor: factored second moment (row and column statistics), no first
 * moment by default: about 4 * (1/rows + 1/cols) per element of a matrix;
 * for transformer matrices this is below 0.01 B; counted as 0.01 B (estimate).
 */
static double optim_bytes(const struct scenario *s)
{
    switch (s->train.optimizer) {
    case OPT_ADAM8BIT:
        return 2.0 + 2.0 * 4.0 / 256.0;
    case OPT_SGD:
        return 4.0;
    case OPT_ADAFACTOR:
        return 0.01;
    case OPT_ADAMW:
    default:
        return s->train.master_weights ? 8.0 : 2.0 * dtype_bytes(s->train.precision);
    }
}

void memory_state_bytes(const struct scenario *s, struct state_bytes *out)
{
    double p = dtype_bytes(s->train.precision);

    if (p < 2)
        p = 2; /* fp8 training keeps 16-bit weights and casts per GEMM */
    out->params = p;
    out->master = s->train.master_weights && p < 4 ? 4.0 : 0.0;
    out->grads = dtype_bytes(s->train.grad_dtype);
    out->optim = optim_bytes(s);
}

double memory_optimizer_traffic(const struct scenario *s)
{
    struct state_bytes sb;

    memory_state_bytes(s, &sb);
    /* Read gradient, states and master; write states, master and the compute copy. */
    return sb.grads + 2 * (sb.optim + sb.master) + sb.params;
}

void memory_emit_static(struct build *b, int cat, double bytes, const char *label)
{
    struct prog *p = b->p;
    int t;

    if (bytes <= 0)
        return;
    t = prog_mark(p, ST_COMPUTE, prog_label(p, label, 0));
    task_mem_start(&p->tasks[t], cat, bytes_i64(bytes));
}

void memory_emit_states(struct build *b, double params, const struct state_bytes *sb,
                        const struct shard_factors *f)
{
    memory_emit_static(b, MC_PARAMS, params * sb->params / f->params, "parameters");
    memory_emit_static(b, MC_MASTER, params * sb->master / f->master, "fp32 master weights");
    memory_emit_static(b, MC_GRADS, params * sb->grads / f->grads, "gradients");
    memory_emit_static(b, MC_OPTIM, params * sb->optim / f->optim, "optimizer states");
}
