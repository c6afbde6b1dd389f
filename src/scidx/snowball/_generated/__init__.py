# Vendored from snowballstemmer 3.1.1 (BSD, see COPYING): the modules Snowball 3.1.1
# generates; not edited, not linted. scidx.snowball is the API.
