#include <stdio.h>
#include "run.h"

void run(void) {
    puts("Hi heidi");
}
