#include <stdio.h>
#include "run.h"

void run(void) {
    printf("%d\n", 17 * 17);
}
