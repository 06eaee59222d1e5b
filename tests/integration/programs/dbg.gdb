break add
run
bt
print a
continue
print a
delete
continue
