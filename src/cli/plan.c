/* placeholder until the plan lands */
#include "cli.h"
int do_plan(int argc, char **argv) { p_err("not implemented"); return EXIT_USAGE; }
