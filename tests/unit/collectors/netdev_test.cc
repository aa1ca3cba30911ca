// placeholder: test file to be written
