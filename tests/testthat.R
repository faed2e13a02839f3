library(testthat)
library(sddgp)

test_check("sddgp")
