/*
 * offload.c - CPU offload: host<->device copies over the rank's PCIe link and
 * the optimizer step on the host CPU (see dp_internal.h).
 *
 * What moves when is the strategies' business (zero.c, fsdp.c): ZeRO-Offload
 * copies each reduced gradient partition to the host as fp32 and the updated
 * 16-bit partition back after the CPU step (DeepSpeed stage_1_and_2.py
 * async_inplace_copy_grad_to_fp32_buffer_from_gpu, stage3.py
 * __partition_grads); ZeRO-3 parameter offload and FSDP CPUOffload copy each
 * parameter shard to the device before its all-gather and the sharded
 * gradient back after its reduction (FSDP _runtime_utils.py _offload_grad).
 *
 * CPU optimizer rate: rules_host_step_time() (rules.c): the hardware file's
 * host.adam_throughput for DeepSpeedCPUAdam, 1/6 of it for torch.optim.
 */
#include "strategy/dp_internal.h"

#include <string.h>

int offload_copy(struct build *b, bool to_device, double bytes, int dep, const char *label, int arg)
{
    struct prog *p = b->p;
    struct task t;
    int i;

    if (bytes <= 0)
        return -1;
    memset(&t, 0, sizeof(t));
    t.kind = TASK_COPY;
    t.stream = to_device ? ST_H2D : ST_D2H;
    t.tcat = TC_OFFLOAD;
    t.bytes = bytes;
    t.label = prog_label(p, label, arg);
    t.mb = -1;
    i = prog_add(p, &t);
    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}

int offload_cpu_step(struct build *b, double params, int dep)
{
    struct prog *p = b->p;
    int i = prog_host(p, TC_OFFLOAD, rules_host_step_time(b->s, params),
                      prog_label(p, "CPU optimizer step", 0), -1);

    if (dep >= 0)
        prog_dep(p, i, dep);
    return i;
}
