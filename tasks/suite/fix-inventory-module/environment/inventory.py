"""A tiny stock ledger."""


class Inventory:
    def __init__(self):
        self._items = {}  # sku -> [quantity, unit_price]

    def add(self, sku, quantity, unit_price):
        """Add `quantity` units of `sku`. For a known sku the quantities add up and the unit
        price becomes `unit_price`."""
        self._items[sku] = [quantity, unit_price]

    def remove(self, sku, quantity):
        """Take `quantity` units of `sku` out. Raises KeyError for an unknown sku and ValueError
        (changing nothing) when fewer than `quantity` units are in stock."""
        self._items[sku][0] -= quantity

    def quantity(self, sku):
        """Units of `sku` in stock; 0 for an unknown sku."""
        return self._items.get(sku, [0, 0])[0]

    def total_value(self):
        """Sum of quantity * unit_price over all skus, rounded to 2 decimals."""
        return round(sum(q * int(p) for q, p in self._items.values()), 2)

    def low_stock(self, threshold):
        """Skus whose quantity is at or below `threshold`, sorted alphabetically."""
        return [sku for sku, (q, _) in self._items.items() if q < threshold]
