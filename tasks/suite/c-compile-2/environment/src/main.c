#include "run.h"

int main(void) {
    run();
    return 0;
}
