#include <stdio.h>

int main(void) {
    puts("Hello from mallory");
    return 0;
}
