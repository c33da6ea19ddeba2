/*
 * workload_lora.c - parameter-efficient finetuning on the projections of a layer: LoRA
 * adapters (x*A then (xA)*B per targeted matrix) with their lora_dropout copies and DoRA's
 * weight norm, the frozen base projections that skip their weight gradients and drop inputs
 * no gradient needs, QLoRA's NF4 -> bf16 dequantization of the base weights, and LLM.int8
 * bases (input quantization, int8 GEMMs, weight dequantization for the input gradient).
 * See workload.h for the model and its sources.
 */
#include "model/workload_internal.h"

#include "model/cost.h"

double workload_nf4_bytes(bool double_quant)
{
    /*
     * NF4: 4 bits per weight, one absmax per 64-weight block. Plain: an fp32
     * constant per block, 32/64 bit. Double quantization: 8-bit constants in
     * blocks of 256 with one fp32 second-level constant, 8/64 + 32/(64*256)
     * bit (QLORA §3: 0.5 -> 0.127 bit/param; BNB functional.py blocksize 64).
     */
    if (double_quant)
        return 0.5 + 1.0 / 64.0 + 4.0 / (64.0 * 256.0);
    return 0.5 + 4.0 / 64.0;
}

/*
 * A base projection under LoRA: frozen, so no weight gradient. PyTorch's
 * autograd saves a matmul operand only for the other operand's gradient
 * (generated VariableType: `if (grad_fn->should_compute_output(1)) self_ =
 * SavedVariable(self)`), so a frozen nn.Linear keeps its input only when an
 * adapter on it (bits `mask` of the targets) needs the same tensor.
 * bitsandbytes' MatMul4Bit saves its input whenever any input needs a
 * gradient (autograd/_functions.py: `ctx.tensors = (A, B)`), so a QLoRA
 * `quantized` projection keeps it regardless.
 */
void wl_freeze(const struct ctx *c, struct op *o, unsigned mask, bool quantized)
{
    if (!c->lora)
        return;
    o->t_wgrad = 0;
    if (!(c->targets & mask) && !(quantized && c->quant))
        o->saved = 0;
}

/*
 * DoRA on one adapted projection (PEFT 0.19 tuners/lora/dora.py
 * DoraLinearLayer.forward via variants.py DoraLinearVariant.forward), per
 * training forward, recomputation included:
 * - the weight norm, detached from the graph (DoRA §4.3): lora_B(lora_A(eye(d_in)))
 *   as two GEMMs, d_in x r x d_in and d_in x d_out x r, then memory-bound
 *   passes over weight-sized tensors: writing eye (4 B per d_in^2), the fp32
 *   product's write and cast (4 + 4 + 2 B), `scaling * lora_weight` (2 + 2),
 *   `weight + ...` (4 + 2) and the row norm (2): 22 B per weight; a quantized
 *   base is dequantized first (dequantize_module_weight);
 * - the combination `(m / ||.|| - 1) * base + m / ||.|| * lora * scaling`:
 *   five read-and-write passes over the T x d_out output forward, twice that
 *   backward (the magnitude's gradient reduces over the tokens), saving the
 *   base and the LoRA results (2 p T d_out) for the magnitude's gradient;
 * - with lora_dropout > 0 the base result is recomputed on the dropped input
 *   (`base_result = F.linear(x, weight)`): one more base GEMM forward and its
 *   input gradient backward.
 * The transient weight-sized tensors are memory_dora_bytes(). Returns the
 * magnitude vector's trainable parameters, d_out per matrix.
 */
static double dora(const struct ctx *c, struct op *o, double T, double d_in, double d_out,
                   double batch)
{
    const struct gpu_spec *g = c->gpu;
    const struct efficiency *e = c->eff;
    double r = c->s->train.lora.rank, p = c->p, w = d_in * d_out * batch;
    double qbytes = c->int8 ? 1.0 : workload_nf4_bytes(c->s->train.lora.double_quant);
    double passes = 4 * d_in * d_in * batch + 22 * w + (c->quant ? (qbytes + 2) * w : 0);
    double out = T * d_out * batch;

    o->hw_flops += 2 * r * d_in * (d_in + d_out) * batch;
    o->bytes += passes + 10 * p * out;
    o->t_fwd = time_add(o->t_fwd, time_add(cost_gemm(g, e, c->dt, d_in, r, d_in, batch),
                                           cost_gemm(g, e, c->dt, d_in, d_out, r, batch)));
    o->t_fwd = time_add(o->t_fwd, cost_membound(g, e, passes + 10 * p * out));
    o->t_dgrad = time_add(o->t_dgrad, cost_membound(g, e, 20 * p * out));
    o->saved += 2 * p * out;
    if (c->s->train.lora.dropout > 0) {
        o->hw_flops += 2 * T * d_in * d_out * batch;
        o->t_fwd = time_add(o->t_fwd, cost_gemm(g, e, c->dt, T, d_out, d_in, batch));
        o->t_dgrad = time_add(o->t_dgrad, cost_gemm(g, e, c->dt, T, d_in, d_out, batch));
    }
    return d_out * batch;
}

/*
 * The adapter of one targeted projection (d_in -> d_out per rank, `batch`
 * experts): forward x*A then (xA)*B; backward the input gradients of both and
 * the weight gradients of A and B; xA is saved for B's gradient. Adds its cost
 * to `o` and returns its parameters per rank, r * (d_in + d_out) * batch.
 */
double wl_adapter(const struct ctx *c, struct op *o, double T, double d_in, double d_out,
                  double batch)
{
    double r = c->s->train.lora.rank;
    const struct gpu_spec *g = c->gpu;
    const struct efficiency *e = c->eff;
    double flops = 2 * T * r * (d_in + d_out) * batch;

    o->flops += flops;
    o->hw_flops += flops;
    o->bytes += c->p * batch * (T * d_in + 2 * T * r + T * d_out + r * (d_in + d_out));
    o->t_fwd = time_add(o->t_fwd, time_add(cost_gemm(g, e, c->dt, T, r, d_in, batch),
                                           cost_gemm(g, e, c->dt, T, d_out, r, batch)));
    o->t_dgrad = time_add(o->t_dgrad, time_add(cost_gemm(g, e, c->dt, T, r, d_out, batch),
                                               cost_gemm(g, e, c->dt, T, d_in, r, batch)));
    o->t_wgrad = time_add(o->t_wgrad, time_add(cost_gemm(g, e, c->dt, r, d_out, T, batch),
                                               cost_gemm(g, e, c->dt, d_in, r, T, batch)));
    o->saved += c->p * T * r * batch;
    if (c->s->train.lora.dora)
        return r * (d_in + d_out) * batch + dora(c, o, T, d_in, d_out, batch);
    return r * (d_in + d_out) * batch;
}

/*
 * lora_dropout > 0 (LitGPT LoRALayer and PEFT LoraLayer compute
 * lora_B(lora_A(dropout(x)))): the adapters of one input read a dropped copy
 * of it, which autograd saves for lora_A's weight gradient together with
 * dropout's 1-byte mask, instead of x; the frozen projection `base` then keeps
 * x only when its own backward needs it (`base_needs`: QLoRA's MatMul4Bit, or
 * a fused attention output). LitGPT's fused QKV applies one lora_dropout to x
 * for all its adapters: one copy per input. PEFT wraps each targeted
 * nn.Linear in its own lora.Linear with its own `lora_dropout[adapter]`
 * module (peft/tuners/lora/layer.py, Linear.forward: `x = dropout(x)` per
 * module), so q_proj, k_proj and v_proj (and gate_proj, up_proj) each keep a
 * dropped copy and a mask of the same input: one per adapter among `mask`.
 * Each dropout is a memory-bound pass reading x and writing the copy and mask.
 */
void wl_adapter_dropout(const struct ctx *c, struct op *base, struct op *lora, double rows,
                        double d_in, bool base_needs, unsigned mask)
{
    unsigned sharing = c->targets & mask;
    double copies = 1, elems;

    if (!(c->s->train.lora.dropout > 0))
        return;
    if (c->hf)
        for (copies = 0; sharing; sharing &= sharing - 1)
            copies++;
    elems = copies * rows * d_in;
    if (!base_needs)
        base->saved = 0;
    lora->saved += elems * (c->p + 1);
    lora->t_fwd = time_add(lora->t_fwd, cost_membound(c->gpu, c->eff, elems * (2 * c->p + 1)));
    lora->t_dgrad = time_add(lora->t_dgrad, cost_membound(c->gpu, c->eff, elems * (2 * c->p + 1)));
}

/* NF4 -> bf16 dequantization of `weights` projection weights, before forward and backward GEMMs. */
void wl_dequant_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                   double weights)
{
    struct op *o;

    if (!c->qlora)
        return;
    o = wl_add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_COL);
    wl_membound(c, o, weights * (workload_nf4_bytes(c->s->train.lora.double_quant) + 2.0), 0);
    o->t_dgrad = o->t_fwd;
}

/*
 * LLM.int8 base projections (bitsandbytes 0.45-0.49 MatMul8bitLt,
 * autograd/_functions.py, with load_in_8bit's threshold 6.0): forward casts
 * each module's input to fp16 (`A.to(torch.float16)`, a copy when training in
 * bf16: read and write 2 B) and quantizes it row-wise (int8_vectorwise_quant:
 * read 2 B, write 1 B), then runs the int8 GEMM with its dequantizing
 * epilogue (int8_mixed_scaled_mm) at the int8 peak (wl_int8_gemm()); the outlier
 * columns' fp16 GEMM is not counted (LLM.int8 §3.2: about 0.1 % of the
 * features). Backward dequantizes the weight to a 16-bit copy
 * (`CB.to(dtype_A, copy=True).mul_(SCB / 127)`: read 1 B, write 2 B, read and
 * write 2 B per weight) for the input-gradient GEMM at the training dtype.
 * `in_elems`: the input elements every module quantizes, summed over the
 * part's modules (Hugging Face's q, k, v and gate, up are separate modules,
 * each quantizing the same input).
 */
void wl_int8_op(const struct ctx *c, struct op *ops, int *n, const char *name, int part,
                double in_elems, double weights)
{
    double per_elem = c->dt == DT_BF16 ? 2 + 2 + 2 + 1 : 2 + 1;
    struct op *o;

    if (!c->int8)
        return;
    o = wl_add_op(ops, n, MAX_OPS, name, OP_MEM, part, SEG_COL);
    wl_membound(c, o, in_elems * per_elem, 0);
    o->t_dgrad = cost_membound(c->gpu, c->eff, weights * (1.0 + 2.0 + 4.0));
}

/* An LLM.int8 base GEMM's forward at the int8 peak (wl_int8_op()); backward stays at the dtype. */
void wl_int8_gemm(const struct ctx *c, struct op *o)
{
    if (c->int8)
        o->t_fwd = cost_gemm(c->gpu, c->eff, DT_INT8, o->m, o->n, o->k, o->batch);
}
