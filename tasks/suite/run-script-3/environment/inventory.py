import sys

items = ['grace', 'heidi', 'nina', 'oscar']
print('report for', sys.argv[1])
for n, item in enumerate(items, 1):
    print(n, item)
