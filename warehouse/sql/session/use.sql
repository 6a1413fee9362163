USE {identifier:database}
