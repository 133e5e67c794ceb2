module spindle/peers/go

go 1.26
