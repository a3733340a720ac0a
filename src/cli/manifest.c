/* placeholder until the manifest parser lands */
#include "cli.h"
int do_manifest(int argc, char **argv) { p_err("not implemented"); return EXIT_USAGE; }
