umber
