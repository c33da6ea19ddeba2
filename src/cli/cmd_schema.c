/* cmd_schema.c - `simtrain schema`: the YAML reference generated from the loader's tables. */
#include <stddef.h>
#include <stdio.h>

#include "cli/cmd.h"
#include "config/schema.h"

struct schema_args {
    struct cli_list pos; /* none accepted */
};

const struct cli_command cmd_schema_spec = {
    .name = "schema",
    .synopsis = "simtrain schema",
    .about = "Prints the reference of every scenario, hardware, workload and calibration key\n"
             "(Markdown), generated from the loader's own tables: docs/yaml-reference.md.\n",
    .opts = NULL,
    .nopts = 0,
    .positional = offsetof(struct schema_args, pos),
    .max_positional = 0,
};

int cmd_schema(int argc, char **argv)
{
    struct schema_args a = { 0 };
    enum cli_result pr = cli_parse(&cmd_schema_spec, argc, argv, &a);

    cli_release(&cmd_schema_spec, &a);
    if (pr != CLI_OK)
        return cli_exit_status(pr);
    cfg_write_reference(stdout);
    return 0;
}
