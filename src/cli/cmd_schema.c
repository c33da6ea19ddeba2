/* cmd_schema.c - `simtrain schema`: the YAML reference generated from the loader's tables. */
#include <stdio.h>
#include <string.h>

#include "cli/cmd.h"
#include "config/schema.h"

int cmd_schema(int argc, char **argv)
{
    (void)argv;
    if (argc > 1) {
        fprintf(stderr, "usage: simtrain schema\n");
        return 2;
    }
    cfg_write_reference(stdout);
    return 0;
}
