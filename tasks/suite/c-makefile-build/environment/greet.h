#ifndef GREET_H
#define GREET_H
#include <stddef.h>

void greet(char *out, size_t size, const char *name);

#endif
