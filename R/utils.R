# Small helpers with no home of their own.

`%||%` <- function(a, b) if (is.null(a)) b else a
