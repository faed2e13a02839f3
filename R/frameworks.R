# Modelling frameworks (parsnip, mlr3) are only suggested: sddgp registers
# its model with each when, and only if, that framework is loaded.

.onLoad <- function(libname, pkgname) {
  register_with("parsnip", register_parsnip)
  register_with("mlr3", register_mlr3)
}

# Register now if `pkg` is already loaded, and again whenever it is loaded
# later (each load of a framework starts from an empty registry).
# `register` must be idempotent: sddgp itself may be loaded more than once.
register_with <- function(pkg, register) {
  if (isNamespaceLoaded(pkg)) register()
  setHook(packageEvent(pkg, "onLoad"), function(...) register())
}

# A clear, classed error where a suggested framework is needed but absent.
require_framework <- function(pkg, what) {
  if (!requireNamespace(pkg, quietly = TRUE)) {
    sddgp_abort(sprintf("%s needs the package %s: install.packages(\"%s\").", what, pkg, pkg),
                class = "sddgp_error_missing_package", package = pkg)
  }
}
