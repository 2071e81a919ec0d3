velvet
