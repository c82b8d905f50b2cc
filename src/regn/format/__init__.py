"""The format layer: the only part of regn that knows byte offsets."""
