/* cost.c - see cost.h for the model and its sources. */
#include "model/cost.h"

#include <math.h>

#include "model/attn_table.h"

void cost_default_efficiency(struct efficiency *eff)
{
    /* Defaults are deliberately generic; shipped hardware files set measured values. */
    eff->gemm_max = 0.80;     /* H100 MAMF 794.5/989 = 0.80 (formulas.md §6.2) */
    eff->gemm_max_fp8 = 0;    /* FP8 GEMMs use gemm_max unless a calibration gives their own */
    eff->gemm_latency = 5000; /* 5 us small-GEMM floor (Derived; calibrate fits it) */
    eff->tile_m = 128;
    eff->tile_n = 128;
    eff->attn_flash = 0.50;    /* FA2: 50-73 % of A100 peak (formulas.md §6.3) */
    eff->attn_standard = 0.25; /* unfused PyTorch attention (hw_microbench.csv: 46/312 A100) */
    eff->mem_bw = 0.85;        /* stream copy 2.90/3.35 H100, 1.61/2.039 A100 (hw_microbench) */
    eff->softmax_fwd = 0.43;   /* Megatron fused softmax, FlashAttention App. E.6 (below) */
    eff->softmax_bwd = 0.87;
    eff->launch = 4000; /* typical kernel launch + dependency overhead, ns */
    eff->host_kernel =
        4000; /* eager PyTorch CPU time per op: pytorch/pytorch #82793 (workload_host.c) */
}

/* The dtype whose datasheet peak cost_peak_flops() returns for `dt`. */
static enum dtype peak_dtype(const struct gpu_spec *gpu, enum dtype dt)
{
    if (dt < DT_COUNT && gpu->flops[dt] > 0)
        return dt;
    return gpu->flops[DT_BF16] > 0 ? DT_BF16 : DT_FP16;
}

double cost_peak_flops(const struct gpu_spec *gpu, enum dtype dt)
{
    return gpu->flops[peak_dtype(gpu, dt)];
}

/* The dtype whose clock model prices `dt`'s GEMMs (a 16-bit dtype takes its twin's), or -1. */
static int clock_dtype(const struct gpu_spec *gpu, enum dtype dt)
{
    enum dtype d = peak_dtype(gpu, dt), twin = d == DT_BF16 ? DT_FP16 : DT_BF16;

    if (gpu->tensor_cores <= 0)
        return -1;
    if (gpu->tc_flop_clk[d] > 0 && gpu->clock_sust_Hz[d] > 0)
        return (int)d;
    if ((d == DT_BF16 || d == DT_FP16) && gpu->tc_flop_clk[twin] > 0 &&
        gpu->clock_sust_Hz[twin] > 0)
        return (int)twin;
    return -1;
}

double cost_gemm_peak_at(const struct gpu_spec *gpu, enum dtype dt, double clock_Hz)
{
    int d = clock_dtype(gpu, dt);

    if (d < 0)
        return cost_peak_flops(gpu, dt);
    return gpu->tensor_cores * gpu->tc_flop_clk[d] *
           (clock_Hz > 0 ? clock_Hz : gpu->clock_sust_Hz[d]);
}

double cost_gemm_peak(const struct gpu_spec *gpu, enum dtype dt)
{
    return cost_gemm_peak_at(gpu, dt, 0);
}

double cost_attn_peak(const struct gpu_spec *gpu, enum dtype dt, double clock_Hz)
{
    return cost_gemm_peak_at(gpu, dt, clock_Hz);
}

double cost_gemm_clock(const struct gpu_spec *gpu, enum dtype dt)
{
    int d = clock_dtype(gpu, dt);

    return d < 0 ? 0 : gpu->clock_sust_Hz[d];
}

double cost_gemm_eff(const struct efficiency *eff, enum dtype dt)
{
    return dt == DT_FP8 && eff->gemm_max_fp8 > 0 ? eff->gemm_max_fp8 : eff->gemm_max;
}

double cost_gemm_quant(const struct gpu_spec *gpu, const struct efficiency *eff, double m, double n)
{
    double tm = eff->tile_m > 0 ? eff->tile_m : 128;
    double tn = eff->tile_n > 0 ? eff->tile_n : 128;
    double bm = ceil(m / tm), bn = ceil(n / tn);
    double tiles = bm * bn;
    double sms = gpu->sm_count > 0 ? gpu->sm_count : 1;
    double waves = ceil(tiles / sms);
    double q_wave = tiles / (waves * sms);
    double q_tile = (m * n) / (bm * tm * bn * tn);

    return q_wave * q_tile;
}

double cost_gemm_seconds(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                         double m, double n, double k, double batch)
{
    double peak = cost_gemm_peak(gpu, dt);
    double flops = 2.0 * m * n * k * batch;
    double q, t_math, t_mem, bytes;

    if (flops <= 0 || peak <= 0)
        return 0;
    /* Batched GEMMs share waves: quantize the combined tile count. */
    q = cost_gemm_quant(gpu, eff, m * batch, n);
    t_math = flops / (peak * cost_gemm_eff(eff, dt) * q);
    bytes = dtype_bytes(dt) * batch * (m * k + k * n + m * n);
    t_mem = bytes / (gpu->mem_bw_Bps * eff->mem_bw);
    return eff->gemm_latency / NS_PER_S + (t_math > t_mem ? t_math : t_mem);
}

sim_time cost_gemm(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                   double m, double n, double k, double batch)
{
    return ns_from_s(cost_gemm_seconds(gpu, eff, dt, m, n, k, batch));
}

sim_time cost_membound(const struct gpu_spec *gpu, const struct efficiency *eff, double bytes)
{
    if (bytes <= 0)
        return 0;
    return time_add(eff->launch, ns_from_s(bytes / (gpu->mem_bw_Bps * eff->mem_bw)));
}

/*
 * Attention's tensor-core work runs at the clock the part holds under load, as GEMMs do: the
 * efficiencies are fractions of cost_attn_peak() (calibrate fits them the same way, at the
 * clock a measurement logged or else at the sustained clock).
 */
static sim_time attention_time(const struct gpu_spec *gpu, const struct efficiency *eff,
                               enum dtype dt, double frac, double flops, double bytes)
{
    double peak = cost_attn_peak(gpu, dt, 0);
    double t_math, t_mem;

    if (flops <= 0)
        return 0;
    t_math = flops / (peak * frac);
    t_mem = bytes / (gpu->mem_bw_Bps * eff->mem_bw);
    return time_add(eff->launch, ns_from_s(t_math > t_mem ? t_math : t_mem));
}

sim_time cost_attention(const struct gpu_spec *gpu, const struct efficiency *eff, enum dtype dt,
                        enum attn_kind kind, double flops, double bytes)
{
    double frac = kind == ATTN_FLASH ? eff->attn_flash : eff->attn_standard;

    return attention_time(gpu, eff, dt, frac, flops, bytes);
}

sim_time cost_flash_attention(const struct gpu_spec *gpu, const struct efficiency *eff,
                              enum dtype dt, enum attn_impl impl, const struct attn_shape *sh,
                              double flops, double bytes)
{
    double rel = attn_rel_rate(gpu->arch, impl, sh->head_dim, sh->causal, sh->seq);

    return attention_time(gpu, eff, dt, eff->attn_flash * rel, flops, bytes);
}

sim_time cost_attn_impl_bwd_extra(const struct gpu_spec *gpu, const struct efficiency *eff,
                                  enum attn_impl impl, double q_elems, double qkv_elems, double p)
{
    sim_time t;

    if (impl != ATTN_IMPL_TRITON || q_elems <= 0)
        return 0;
    /* _bwd_preprocess_do_o_dot: delta = rowsum(O * dO), reads both. */
    t = cost_membound(gpu, eff, 2 * p * q_elems);
    /* init_to_zero('DQ') pre-hook of the autotuned _bwd_kernel: fp32 dq_accum */
    t = time_add(t, cost_membound(gpu, eff, 4 * q_elems));
    /* dq.copy_(dq_accum): read fp32, write 16-bit */
    t = time_add(t, cost_membound(gpu, eff, (4 + p) * q_elems));
    /* split_with_sizes_backward: torch.cat(dq, dk, dv) into d(Wqkv output) */
    return time_add(t, cost_membound(gpu, eff, 2 * p * qkv_elems));
}

/*
 * flash_attn/bert_padding.py @v2.4.2 (the flash-attn llm-foundry 5e85bd6 installs, setup.py
 * L100-101): IndexFirstAxis.forward is torch.gather with an expanded (stride-0) index, so only
 * the values move (read p, write p per element); IndexPutFirstAxis.forward writes zeros and
 * then the values (p + 2p); their backwards are the mirror images: scatter_ into zeros (3p)
 * and a gather (2p). Kernels, one each: forward 3 gathers, zeros, index_put; backward gather,
 * 3 x (zeros, scatter), cat.
 */
sim_time cost_attn_unpad(const struct gpu_spec *gpu, const struct efficiency *eff, double q_elems,
                         double qkv_elems, double p, bool backward)
{
    sim_time t;

    if (q_elems <= 0)
        return 0;
    if (!backward) {
        t = time_mul(cost_membound(gpu, eff, 2 * p * qkv_elems / 3), 3); /* unpad q, k, v */
        t = time_add(t, cost_membound(gpu, eff, p * q_elems));           /* zeros of pad */
        return time_add(t, cost_membound(gpu, eff, 2 * p * q_elems));    /* index_put */
    }
    t = cost_membound(gpu, eff, 2 * p * q_elems); /* grad_output[indices] */
    t = time_add(t, time_mul(cost_membound(gpu, eff, p * qkv_elems / 3), 3));     /* zeros */
    t = time_add(t, time_mul(cost_membound(gpu, eff, 2 * p * qkv_elems / 3), 3)); /* scatter_ */
    return time_add(t, cost_membound(gpu, eff, 2 * p * qkv_elems)); /* cat into d(Wqkv out) */
}

/*
 * Fraction of the memory-bound rate (HBM x mem_bw) Megatron's fused softmax
 * kernels reach (the defaults of efficiency.softmax_fwd / softmax_bwd), from
 * FlashAttention App. E.6 (arXiv:2205.14135), which times Megatron's attention core on an A100 40GB
 * (fp16, batch 16, 8 heads of 64, padding mask, no dropout; tests/validation/hw_microbench.csv). At
 * sequence 2048, Table 12 gives 5.80 ms forward and Table 13 6.49 ms backward. Taking away the
 * batched GEMMs as cost_gemm() prices them on the 40 GB calibration (0.899 ms each: 2 forward, 4
 * backward) and the 0.057 ms output layout copy leaves the softmax: forward 3.945 ms for 5.37e8
 * scores x 4 B = 0.544 TB/s, 0.427 of 1555 GB/s x 0.8192; backward 2.894 ms for 6 B each = 1.113
 * TB/s, 0.874. (The [b, 1, s, s] mask is shared by the heads of a sample and read from L2; it is
 * not counted.) The forward is far from bandwidth-bound: its two reductions over a 2048-element row
 * in registers keep few warps in flight. Sequence 1024 of the same tables checks the fractions
 * (test_cost.c).
 */
sim_time cost_fused_softmax(const struct gpu_spec *gpu, const struct efficiency *eff, double elems,
                            double p, bool causal, bool backward)
{
    /*
     * scaled_upper_triang_masked_softmax loads where element_index < row + 1,
     * half of each row, and writes every element: the bytes moved, at the
     * measured fraction, set the time in both directions. (Keeping the padded
     * kernel's time per score in the forward, as if its loads cost nothing,
     * moves SC'21 Table 1 by +1 to +3 % but KOR22 Table 4's selective layer
     * to 8.4 % over the measurement; docs/model.md.)
     */
    double read = causal ? 0.5 : 1.0;
    double bytes = backward ? (2 * read + 1) * p * elems : (read + 1) * p * elems;
    double frac = backward ? eff->softmax_bwd : eff->softmax_fwd;

    if (elems <= 0)
        return 0;
    return time_add(eff->launch, ns_from_s(bytes / (gpu->mem_bw_Bps * eff->mem_bw * frac)));
}

double cost_overlap_rate(const struct gpu_spec *gpu, double held)
{
    double free_sm = 1.0 - held;

    if (!(held > 0))
        return 1.0;
    if (free_sm < 1e-9) /* every SM held, up to rounding of the sum of shares */
        return 0;
    if (gpu->arch == ARCH_HOPPER)
        return 1.0 / ceil(1.0 / free_sm); /* persistent GEMM blocks: waves of the free SMs */
    return free_sm;
}
