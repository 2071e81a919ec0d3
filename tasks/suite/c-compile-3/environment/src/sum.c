#include <stdio.h>

int main(void) {
    printf("%d\n", 33 + 46);
    return 0;
}
