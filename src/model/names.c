/* names.c - dtype sizes and the YAML spellings of enumerations (config.h). */
#include "model/scenario.h"

double dtype_bytes(enum dtype t)
{
    static const double bytes[DT_COUNT] = {
        [DT_FP32] = 4, [DT_TF32] = 4, [DT_BF16] = 2,  [DT_FP16] = 2,
        [DT_FP8] = 1,  [DT_INT8] = 1, [DT_NF4] = 0.5,
    };
    return (unsigned)t < DT_COUNT ? bytes[t] : 0;
}

#define NAME_OF(table, v) ((unsigned)(v) < ARRAY_LEN(table) && table[v] ? table[v] : "?")

const char *dtype_name(enum dtype t)
{
    static const char *const n[] = { "fp32", "tf32", "bf16", "fp16", "fp8", "int8", "nf4" };
    return NAME_OF(n, t);
}

const char *sharding_name(enum sharding sh)
{
    static const char *const n[] = { "none", "zero1",        "zero2", "zero3",
                                     "fsdp", "fsdp_grad_op", "hsdp",  "fsdp_no_shard" };
    return NAME_OF(n, sh);
}

const char *schedule_name(enum pp_schedule s)
{
    static const char *const n[] = { "1f1b", "gpipe", "interleaved", "zb-h1" };
    return NAME_OF(n, s);
}

const char *recompute_name(enum recompute r)
{
    static const char *const n[] = { "none", "selective", "full" };
    return NAME_OF(n, r);
}

const char *optimizer_name(enum optimizer_kind o)
{
    static const char *const n[] = { "adamw",           "adam8bit",          "sgd",
                                     "adafactor",       "torchao_adamw8bit", "torchao_adamw4bit",
                                     "torchao_adamwfp8" };
    return NAME_OF(n, o);
}

const char *optimizer_impl_name(enum optimizer_impl o)
{
    static const char *const n[] = { "fused", "foreach", "for_loop", "for_loop_sync" };
    return NAME_OF(n, o);
}

const char *finetune_name(enum finetune f)
{
    static const char *const n[] = { "full", "lora", "qlora", "lora_int8" };
    return NAME_OF(n, f);
}

const char *attn_impl_name(enum attn_impl i)
{
    static const char *const n[] = { "cuda", "triton", "fa3", "cudnn" };
    return NAME_OF(n, i);
}

const char *fp8_recipe_name(enum fp8_recipe r)
{
    static const char *const n[] = { "none", "te_delayed", "te_current", "torchao_tensorwise",
                                     "torchao_rowwise" };
    return NAME_OF(n, r);
}

const char *algo_name(enum coll_algo a)
{
    static const char *const n[] = { "auto", "ring", "tree", "nvls", "nvls_tree", "hier" };
    return NAME_OF(n, a);
}

const char *proto_name(enum coll_proto p)
{
    static const char *const n[] = { "auto", "ll", "ll128", "simple" };
    return NAME_OF(n, p);
}

const char *arch_name(enum gpu_arch a)
{
    static const char *const n[] = { "volta", "ampere", "ada", "hopper", "blackwell" };
    return NAME_OF(n, a);
}

const char *coll_op_name(enum coll_op op)
{
    static const char *const n[] = { "all_reduce", "all_gather", "reduce_scatter", "broadcast",
                                     "reduce",     "all_to_all", "send_recv" };
    return NAME_OF(n, op);
}
