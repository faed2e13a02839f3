# The graphics primitives a plot drew, in order, from the display list of a
# null PDF device (no files, no image comparison): e.g. "C_plotXY" for
# points and lines, "C_polygon", "C_segments", "C_abline", "C_title".  One
# element per page, each with the primitives' names and their arguments.
recorded_pages <- function(expr) {
  grDevices::pdf(NULL)
  on.exit(grDevices::dev.off())
  grDevices::dev.control("enable")
  pages <- list()
  old <- grDevices::devAskNewPage(FALSE)
  on.exit(grDevices::devAskNewPage(old), add = TRUE, after = FALSE)
  # Each new page starts a new display list: record the one before it.
  setHook("before.plot.new", function() {
    p <- grDevices::recordPlot()[[1L]]
    if (length(p)) pages[[length(pages) + 1L]] <<- p
  })
  on.exit(setHook("before.plot.new", NULL, "replace"), add = TRUE)
  force(expr)
  pages[[length(pages) + 1L]] <- grDevices::recordPlot()[[1L]]
  lapply(pages, function(p) list(
    calls = vapply(p, function(e) e[[2L]][[1L]]$name, character(1)),
    args = lapply(p, function(e) e[[2L]][-1L])))
}

# The arguments of the `k`-th call of primitive `name` on a recorded page.
page_args <- function(page, name, k = 1L) page$args[[which(page$calls == name)[k]]]
