#include <stdio.h>
#include "run.h"

void run(void) {
    for (int i = 1; i <= 4; i++) printf("%d\n", i);
}
