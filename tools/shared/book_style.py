# shared helper: book_style (print options, the plotting look and the device; the same in every chapter)
np.set_printoptions(precision=4, suppress=True)
torch.set_printoptions(precision=4, sci_mode=False)
plt.rcParams.update({
    "figure.figsize": (6.4, 3.6), "figure.dpi": 100, "font.size": 10,
    "axes.grid": True, "grid.alpha": 0.3,
    "axes.spines.top": False, "axes.spines.right": False,
    "axes.prop_cycle": plt.cycler(color=["#3b6ea8", "#d1603d", "#5a9e6f", "#8c6bb1", "#c9a227", "#6b6b6b"]),
    "image.cmap": "viridis",
})
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
# float32 on a GPU as on a CPU: no TensorFloat-32 (Ampere and later GPUs would round cuDNN's recurrent
# layers and the matrix products to a 10-bit mantissa, beyond the tolerances the chapters assert)
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
