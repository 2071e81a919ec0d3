kernel
