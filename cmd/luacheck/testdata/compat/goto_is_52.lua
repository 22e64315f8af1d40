goto done
::done::
