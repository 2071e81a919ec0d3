#include <stdio.h>

int main(void) {
    puts("*** alice ***");
    return 0;
}
