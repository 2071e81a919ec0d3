#include <stdio.h>
#include "greet.h"

void greet(char *out, size_t size, const char *name) {
    snprintf(out, size, "Hello, %s!", name);
}
