"""Convergence and reference convergence points (RCP): each folder's RCP verdict and each run's convergence
(`verdict`), the log lines the RCP reader needs (`lines`), numpy's and scipy's statistics without them (`npstats`,
`tstat`), the RCP `advise` predicts (`prediction`), --custom-rcps (`custom`) and the RCP-bypass evidence (`evidence`).
"""
