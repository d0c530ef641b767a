# shared helper: mha_input_checks (chapter 5's checks of the inputs of MultiHeadAttention; taught there)
def _check_tensor(name, x, ndim):
    if not torch.is_tensor(x):
        raise TypeError(f"{name} should be a torch.Tensor, got {type(x).__name__}.")
    if x.dim() != ndim:
        raise ValueError(f"{name} should have {ndim} dimensions (batch, length, embed_dim); got shape {tuple(x.shape)}.")


def _check_mask(name, mask, allowed_shapes):
    if not torch.is_tensor(mask):
        raise TypeError(f"{name} should be a torch.Tensor, got {type(mask).__name__}.")
    if mask.dtype != torch.bool and not mask.is_floating_point():
        raise TypeError(f"{name} should be boolean (True = blocked) or floating (added to the scores); got {mask.dtype}.")
    if tuple(mask.shape) not in [shape for shape, _ in allowed_shapes]:
        expected = " or ".join(f"{desc} = {shape}" for shape, desc in allowed_shapes)
        raise ValueError(f"{name} has shape {tuple(mask.shape)}; expected {expected}.")
