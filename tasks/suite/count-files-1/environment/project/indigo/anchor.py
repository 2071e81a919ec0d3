anchor
