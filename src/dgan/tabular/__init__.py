"""Tables and arrays as users give them, checked and converted for training, and back.

`frames` turns a DataFrame into arrays plus its `layout`, `columns` says which column plays
which role, `arrays` checks numpy input, `missing` repairs missing values, `to_frame`
turns generated arrays back into the user's table, `lengths` infers sequence lengths,
`windows` cuts long recordings into windows (each one example) and `messages` holds the
pieces of error messages they share.
"""
