#!/bin/bash
set -euo pipefail
cd /app
cat > /app/cart.py <<'EOF'
def add_item(item, cart=None):
    """Append item to cart and return cart. Called without a cart, it starts a new, empty cart
    for that call: carts from separate calls never share items."""
    if cart is None:
        cart = []
    cart.append(item)
    return cart


def merge_carts(first, second):
    """A new cart with first's items, then second's. Neither argument is modified."""
    return list(first) + list(second)
EOF
