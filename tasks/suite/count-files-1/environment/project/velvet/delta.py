delta
