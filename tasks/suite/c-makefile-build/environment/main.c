#include <stdio.h>
#include "greet.h"

int main(int argc, char **argv) {
    char buffer[128];
    greet(buffer, sizeof buffer, argc > 1 ? argv[1] : "world");
    puts(buffer);
    return 0;
}
